/** How `npm run tck` reads a TCK run: counts, failed names, and only named judged-wrong tests excused. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { failedTests, JUDGED_WRONG, pytestCounts } from '../../../scripts/tck-results.ts';

const OUTPUT = [
  'E   TypeError: something',
  'FAILED tests/mandatory/jsonrpc/test_a2a_error_codes_enhanced.py::test_push_notification_not_supported_error_32003_enhanced - TypeError',
  'FAILED tests/optional/capabilities/test_x.py::TestMulti::test_other - AssertionError',
  '=========== 2 failed, 86 passed, 28 skipped in 16.52s ===========',
].join('\n');

test('the summary line gives the counts; an output without one did not finish', () => {
  assert.deepEqual(pytestCounts(OUTPUT), { passed: 86, failed: 2, finished: true });
  assert.deepEqual(pytestCounts('Traceback (most recent call last):'), { passed: 0, failed: 0, finished: false });
});

test('failed tests are read by name, and only the named judged-wrong ones are listed as such', () => {
  const failed = failedTests(OUTPUT);
  assert.deepEqual(failed, ['test_push_notification_not_supported_error_32003_enhanced', 'test_other']);
  assert.deepEqual(failed.filter((name) => (JUDGED_WRONG as readonly string[]).includes(name)), ['test_push_notification_not_supported_error_32003_enhanced']);
  // The TCK agent takes binary parts (decision 85): that test must pass, not be excused.
  assert.deepEqual([...JUDGED_WRONG], ['test_push_notification_not_supported_error_32003_enhanced']);
});
