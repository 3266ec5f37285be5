import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { MESH_ERRORS, MeshRpcError } from '../../../src/mesh/runtime/mesh-errors.ts';

const DOCS = readFileSync(fileURLToPath(new URL('../../../docs/mesh.md', import.meta.url)), 'utf8');

/** The rows `| -32xxx | NAME | status | … |` of docs/mesh.md's error table. */
function documentedCodes(): Map<string, { code: number; status: number }> {
  const rows = new Map<string, { code: number; status: number }>();
  for (const match of DOCS.matchAll(/^\| (-32\d{3}) \| ([A-Z_]+) \| (\d{3}) \|/gm)) {
    rows.set(match[2] as string, { code: Number(match[1]), status: Number(match[3]) });
  }
  return rows;
}

describe('mesh error codes', () => {
  test('docs/mesh.md lists exactly the codes of the table, with the same HTTP status', () => {
    const documented = documentedCodes();
    const table = new Map(Object.entries(MESH_ERRORS).map(([name, entry]) => [name, { code: entry.code, status: entry.httpStatus }]));
    assert.deepEqual(documented, table);
  });

  test('codes are unique', () => {
    const codes = Object.values(MESH_ERRORS).map((entry) => entry.code);
    assert.equal(new Set(codes).size, codes.length);
  });

  test('the spec\'s and the contract\'s codes have their stated meaning', () => {
    assert.equal(MESH_ERRORS.PARSE_ERROR.code, -32700);
    assert.equal(MESH_ERRORS.METHOD_NOT_FOUND.code, -32601);
    assert.equal(MESH_ERRORS.AUTHENTICATION_FAILED.code, -32001);
    assert.equal(MESH_ERRORS.AUTHENTICATION_FAILED.message, 'Authentication Failed');
    assert.equal(MESH_ERRORS.CONSENT_DENIED.message, 'Consent Denied');
    assert.equal(MESH_ERRORS.TASK_NOT_FOUND.code, -32002);
    assert.equal(MESH_ERRORS.TASK_NOT_CANCELABLE.code, -32004);
    assert.equal(MESH_ERRORS.AGENT_UNKNOWN.code, -32010);
    assert.equal(MESH_ERRORS.AGENT_UNAVAILABLE.code, -32011);
    assert.equal(MESH_ERRORS.SESSION_NOT_FOUND.code, -32013, 'the avatar session error');
    for (const [name, entry] of Object.entries(MESH_ERRORS)) {
      assert.equal(entry.httpStatus, name === 'AUTHENTICATION_FAILED' ? 401 : 200, name);
    }
  });

  test('an error object carries data only when there is some', () => {
    assert.deepEqual(new MeshRpcError('TASK_NOT_FOUND').toErrorObject(), { code: -32002, message: 'Task not found' });
    assert.deepEqual(new MeshRpcError('INVALID_PARAMS', 'bad', { x: 1 }).toErrorObject(), { code: -32602, message: 'bad', data: { x: 1 } });
  });
});
