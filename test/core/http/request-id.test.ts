/** The one request-id policy of every Ward server (core/http/request-id.ts). */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { requestIdFor } from '../../../src/core/http/request-id.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('request ids', () => {
  test("a well-formed caller's id is kept: a UUID, a trace token", () => {
    const uuid = crypto.randomUUID();
    assert.equal(requestIdFor({ 'x-request-id': uuid }), uuid);
    assert.equal(requestIdFor({ 'x-request-id': 'trace-123.a:b_c' }), 'trace-123.a:b_c');
  });

  test('a missing, malformed, too long or PHI-carrying id is replaced by a fresh UUID', () => {
    for (const incoming of [undefined, '', 'has spaces', 'x'.repeat(129), ['a', 'b'], 'NHS-943-476-5919', 'mrn:00482913', 'ssn-123-45-6789']) {
      const id = requestIdFor({ 'x-request-id': incoming });
      assert.match(id, UUID, String(incoming));
      assert.notEqual(id, incoming);
    }
  });
});
