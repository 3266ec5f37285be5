import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { ERROR_CODES, WardError, errorEnvelope } from '../../src/core/errors.ts';

const docs = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');

/** Rows of the codes table in docs/errors.md: | `CODE` | status | retryable | meaning | */
function documentedCodes(): Map<string, { status: number; retryable: boolean }> {
  const rows = new Map<string, { status: number; retryable: boolean }>();
  for (const match of docs.matchAll(/^\|\s*`([A-Z_]+)`\s*\|\s*(\d{3})\s*\|\s*(yes|no)\s*\|/gm)) {
    rows.set(match[1] as string, { status: Number(match[2]), retryable: match[3] === 'yes' });
  }
  return rows;
}

describe('error codes', () => {
  test('docs/errors.md lists exactly the codes of the table, with the same status and retryability', () => {
    const documented = documentedCodes();
    assert.deepEqual([...documented.keys()].sort(), Object.keys(ERROR_CODES).sort());
    for (const [code, spec] of Object.entries(ERROR_CODES)) {
      assert.deepEqual(documented.get(code), { status: spec.status, retryable: spec.retryable }, code);
    }
  });

  test('codes are UPPER_SNAKE and statuses are 4xx or 5xx', () => {
    for (const [code, spec] of Object.entries(ERROR_CODES)) {
      assert.match(code, /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/);
      assert.ok(spec.status >= 400 && spec.status < 600, code);
    }
  });

  test('the envelope carries the code, message, details, retryable and retry_after_ms', () => {
    assert.deepEqual(errorEnvelope('IDEMPOTENCY_KEY_IN_PROGRESS', undefined, {}, 1000), {
      error: {
        code: 'IDEMPOTENCY_KEY_IN_PROGRESS',
        message: ERROR_CODES.IDEMPOTENCY_KEY_IN_PROGRESS.title,
        details: {},
        retryable: true,
        retry_after_ms: 1000,
      },
    });
    const error = new WardError('AGENT_NOT_FOUND');
    assert.equal(error.status, 404);
    assert.equal(error.message, 'No such agent.');
  });
});
