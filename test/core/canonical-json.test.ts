/**
 * RFC 8785 from a maintained package (issue 42): the ledger's leaves and the A2A card signature
 * payload are written by `canonicalize`. Before, both were written by `safe-stable-stringify`, which
 * gives the same bytes for JSON values; every ledger and card signature made before the change must
 * still verify, so the two must agree on every value an event or a card can carry.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { stringify } from 'safe-stable-stringify';
import { canonicalAgentCardPayload } from '../../src/core/crypto/agent-card-canonical.ts';

test('canonicalize writes every JSON value as the earlier serialiser did, so old leaves and signatures verify', () => {
  fc.assert(
    fc.property(fc.jsonValue(), (value) => {
      assert.equal(canonicalize(value), stringify(value));
    }),
    { numRuns: 2_000 },
  );
});

test('the RFC 8785 examples: keys by UTF-16 code units, numbers in ECMAScript form, no whitespace', () => {
  // RFC 8785 §3.2.3 sorts by UTF-16 code units: "\u20ac" (U+20AC) before "\ud83d\ude00" (a surrogate pair, 0xD83D).
  assert.equal(canonicalize({ '\u20ac': 1, '\ud83d\ude00': 2, '\r': 3, '1': 4, '\u0080': 5, '\u00f6': 6 }), '{"\\r":3,"1":4,"\u0080":5,"\u00f6":6,"\u20ac":1,"\ud83d\ude00":2}');
  assert.equal(canonicalize({ numbers: [333333333.3333333, 1e30, 4.5, 2e-3, 0.000000000000000000000000001] }), '{"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27]}');
});

test("the card payload is the card's 1.0 members in RFC 8785 form", () => {
  const payload = canonicalAgentCardPayload({ version: '1.0', name: 'Échos', description: '', skills: [{ id: 's', name: 'S', tags: [] }], url: 'https://not.signed' });
  assert.equal(payload, '{"name":"Échos","skills":[{"id":"s","name":"S"}],"version":"1.0"}');
});
