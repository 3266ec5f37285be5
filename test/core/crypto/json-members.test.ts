import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { withCompactJws, withMembers } from '../../../src/core/crypto/json-members.ts';

test('members appended to an object\'s JSON bytes are the bytes JSON.stringify gives the merged object, non-ASCII text included', () => {
  fc.assert(
    fc.property(fc.dictionary(fc.string({ unit: 'binary' }), fc.jsonValue()), fc.dictionary(fc.string(), fc.jsonValue()), (body, extra) => {
      // Names that are array indices come first in a JS object whatever their order, so they are not appended names.
      const plain = Object.fromEntries(Object.entries(body).filter(([key]) => key !== '__proto__'));
      const members = Object.fromEntries(Object.entries(extra).filter(([key]) => !Object.hasOwn(plain, key) && key !== '__proto__' && !/^(0|[1-9]\d*)$/.test(key)));
      assert.deepEqual(withMembers(Buffer.from(JSON.stringify(plain)), members), Buffer.from(JSON.stringify({ ...plain, ...members })));
    }),
  );
});

test('an empty object, no members, and members whose value is undefined', () => {
  const text = (json: string, members: Record<string, unknown>) => withMembers(Buffer.from(json), members).toString();
  assert.equal(text('{}', { a: 1 }), '{"a":1}');
  assert.equal(text('{"a":1}', {}), '{"a":1}');
  assert.equal(text('{"a":1}', { b: undefined, c: 'x' }), '{"a":1,"c":"x"}');
});

test('a compact JWS appended as bytes is the bytes JSON.stringify gives, on an empty object and a full one', () => {
  const base64url = fc.string({ unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_') });
  fc.assert(
    fc.property(fc.dictionary(fc.string({ unit: 'binary' }), fc.jsonValue()), base64url, base64url, base64url, (body, header, payload, signature) => {
      const plain = Object.fromEntries(Object.entries(body).filter(([key]) => key !== '__proto__' && key !== 'signed_response'));
      const jws = `${header}.${payload}.${signature}`;
      const text = JSON.stringify(plain);
      assert.deepEqual(withCompactJws(Buffer.from(text), 'signed_response', jws), Buffer.from(JSON.stringify({ ...plain, signed_response: jws })));
    }),
  );
  assert.equal(withCompactJws(Buffer.from('{}'), 'sig', 'a.b.c').toString(), '{"sig":"a.b.c"}');
});
