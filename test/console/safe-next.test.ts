/**
 * Bug pinned (issue 48, finding 6): `safeNext('/.//evil.example')` returned `//evil.example`, a
 * protocol-relative path that a browser follows off-site; only a second filter saved it. The
 * function itself keeps every `next` on this console, whatever it is given.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { safeNext } from '../../src/console/access/access.ts';

const ORIGIN = 'https://console.example.org';

/** What a browser does with a `Location` of `next`: where it goes, and that it stays on this origin. */
function staysOnConsole(next: string): void {
  assert.ok(next.startsWith('/'), `${JSON.stringify(next)} is not a path`);
  assert.ok(!next.startsWith('//'), `${JSON.stringify(next)} is protocol-relative`);
  // Browsers drop tabs and newlines and read `\` as `/`: none of them may be left in a redirect.
  // eslint-disable-next-line no-control-regex -- control characters are what is looked for
  assert.doesNotMatch(next, /[\u0000-\u001f\u007f\\]/, JSON.stringify(next));
  assert.equal(new URL(next, ORIGIN).origin, ORIGIN, JSON.stringify(next));
}

test('dot segments before a doubled slash do not make a protocol-relative path', () => {
  for (const bad of ['/.//evil.example', '/..//evil.example', '/./..//evil.example/x', '/a/../..//evil.example', '/%2e//evil.example', '/.%2e//evil.example', '/.//evil.example?x#y']) {
    const next = safeNext(bad);
    staysOnConsole(next);
    assert.doesNotMatch(next, /evil\.example/, `${JSON.stringify(bad)} → ${next}`);
  }
});

test('property: whatever the input, the result stays on this console and is its own fixed point', () => {
  // Strings made mostly of the characters paths are attacked with, so that the odd cases come up often.
  const piece = fc.constantFrom('/', '//', '.', '..', '\\', '%2e', '%2f', '%5c', '%09', '\t', '\n', ':', '@', '?', '#', 'evil.example', 'javascript:', 'agents', ' ', 'é', '\u0000');
  const tricky = fc.array(piece, { maxLength: 12 }).map((parts) => parts.join(''));
  fc.assert(
    fc.property(fc.oneof(tricky, tricky.map((rest) => `/${rest}`), fc.string()), (value) => {
      const next = safeNext(value);
      staysOnConsole(next);
      assert.equal(safeNext(next), next, `not a fixed point: ${JSON.stringify(value)} → ${JSON.stringify(next)}`);
    }),
    { numRuns: 5000 },
  );
});

test('property: a plain path of this console, with its query and fragment, is kept as it is', () => {
  const segment = fc.stringMatching(/^[a-z0-9_-]{1,12}$/);
  const query = fc.option(fc.stringMatching(/^[a-z]{1,8}=[a-z0-9]{0,8}$/), { nil: undefined });
  fc.assert(
    fc.property(fc.array(segment, { minLength: 1, maxLength: 5 }), query, (segments, search) => {
      const path = `/${segments.join('/')}${search ? `?${search}` : ''}`;
      assert.equal(safeNext(path), path);
    }),
  );
});
