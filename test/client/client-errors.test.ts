import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { CLIENT_ERROR_CODES, SIGNATURE_PROBLEMS } from '../../src/client/index.ts';
import { ERROR_CODES } from '../../src/core/errors.ts';

const docs = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
const clientSection = docs.slice(docs.indexOf('## In the registry client'));

describe('client-side error codes', () => {
  test('docs/errors.md lists exactly the client-side codes, with the same retryability', () => {
    const documented = new Map([...clientSection.matchAll(/^\|\s*`([A-Z_]+)`\s*\|\s*(yes|no)\s*\|/gm)].map((match) => [match[1], match[2] === 'yes']));
    assert.deepEqual([...documented.keys()].sort(), Object.keys(CLIENT_ERROR_CODES).sort());
    for (const [code, spec] of Object.entries(CLIENT_ERROR_CODES)) assert.equal(documented.get(code), spec.retryable, code);
  });

  test('no client-side code is also a registry code', () => {
    for (const code of Object.keys(CLIENT_ERROR_CODES)) assert.equal(code in ERROR_CODES, false, code);
  });

  test('every problem SIGNATURE_INVALID can name is explained in docs/errors.md', () => {
    const row = clientSection.split('\n').find((line) => line.startsWith('| `SIGNATURE_INVALID`')) ?? '';
    for (const problem of SIGNATURE_PROBLEMS) assert.ok(row.includes(`\`${problem}\``), problem);
  });
});
