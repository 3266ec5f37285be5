import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { withMembers } from '../../../src/core/crypto/json-members.ts';

test('members appended to an object\'s JSON are the bytes JSON.stringify gives the merged object', () => {
  fc.assert(
    fc.property(fc.dictionary(fc.string(), fc.jsonValue()), fc.dictionary(fc.string(), fc.jsonValue()), (body, extra) => {
      // Names that are array indices come first in a JS object whatever their order, so they are not appended names.
      const members = Object.fromEntries(Object.entries(extra).filter(([key]) => !Object.hasOwn(body, key) && key !== '__proto__' && !/^(0|[1-9]\d*)$/.test(key)));
      const plain = Object.fromEntries(Object.entries(body).filter(([key]) => key !== '__proto__'));
      assert.equal(withMembers(JSON.stringify(plain), members), JSON.stringify({ ...plain, ...members }));
    }),
  );
});

test('an empty object, no members, and members whose value is undefined', () => {
  assert.equal(withMembers('{}', { a: 1 }), '{"a":1}');
  assert.equal(withMembers('{"a":1}', {}), '{"a":1}');
  assert.equal(withMembers('{"a":1}', { b: undefined, c: 'x' }), '{"a":1,"c":"x"}');
});
