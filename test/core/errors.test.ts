import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { ERROR_CODES, WardError, errorEnvelope } from '../../src/core/errors.ts';

const docs = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');

type Documented = { status: number; retryable: boolean; jsonRpc: number | null };

/** Rows of the codes table in docs/errors.md: | `CODE` | status | retryable | JSON-RPC or — | meaning | */
function documentedCodes(): Map<string, Documented> {
  const rows = new Map<string, Documented>();
  for (const match of docs.matchAll(/^\|\s*`([A-Z_]+)`\s*\|\s*(\d{3})\s*\|\s*(yes|no)\s*\|\s*(-32\d{3}|—)\s*\|/gm)) {
    const jsonRpc = match[4] === '—' ? null : Number(match[4]);
    rows.set(match[1] as string, { status: Number(match[2]), retryable: match[3] === 'yes', jsonRpc });
  }
  return rows;
}

/** The table's side of a row: the JSON-RPC code only where the entry has one. */
function tableRow(spec: (typeof ERROR_CODES)[keyof typeof ERROR_CODES]): Documented {
  return { status: spec.status, retryable: spec.retryable, jsonRpc: 'jsonRpc' in spec ? spec.jsonRpc.code : null };
}

describe('error codes', () => {
  test('docs/errors.md lists exactly the codes of the table, with the same status, retryability and JSON-RPC code', () => {
    const documented = documentedCodes();
    assert.deepEqual([...documented.keys()].sort(), Object.keys(ERROR_CODES).sort());
    for (const [code, spec] of Object.entries(ERROR_CODES)) {
      assert.deepEqual(documented.get(code), tableRow(spec), code);
    }
  });

  test('JSON-RPC codes are unique and in the range JSON-RPC 2.0 reserves for errors', () => {
    const codes = Object.values(ERROR_CODES).flatMap((spec) => ('jsonRpc' in spec ? [spec.jsonRpc.code] : []));
    assert.ok(codes.length > 0);
    assert.equal(new Set(codes).size, codes.length);
    for (const code of codes) assert.ok(code >= -32768 && code <= -32000, String(code));
  });

  test('the renamed mesh names in docs/errors.md point at codes of the table with the same JSON-RPC code', () => {
    const renames = [...docs.matchAll(/^\|\s*`([A-Z_]+)`\s*\|\s*`([A-Z_]+)`\s*\|\s*(-32\d{3})\s*\|/gm)];
    assert.ok(renames.length > 0, 'the table of renamed names is missing');
    for (const [, was = '', now = '', jsonRpc] of renames) {
      assert.equal(was in ERROR_CODES, false, `${was} is not a registry code`);
      const spec = ERROR_CODES[now as keyof typeof ERROR_CODES];
      assert.equal(spec && tableRow(spec).jsonRpc, Number(jsonRpc), `${was} → ${now}`);
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
