import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ERROR_CODES } from '../../../src/core/errors.ts';
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

  test('the errors the mesh shares with the registry are the shared table\'s, under its names, with its JSON-RPC codes', () => {
    const shared = Object.entries(ERROR_CODES).flatMap(([name, spec]) => ('jsonRpc' in spec ? [[name, spec.jsonRpc] as const] : []));
    assert.deepEqual(shared.map(([name]) => name).sort(), ['INTERNAL_ERROR', 'PHI_DETECTED', 'UNAUTHORIZED', 'VALIDATION_ERROR']);
    const mesh: Record<string, { code: number; message: string }> = MESH_ERRORS;
    for (const [name, jsonRpc] of shared) assert.deepEqual({ code: mesh[name]?.code, message: mesh[name]?.message }, jsonRpc, name);
    // The mesh's own names never reuse a registry code, which would give one name two meanings.
    for (const name of Object.keys(MESH_ERRORS)) {
      if (name in ERROR_CODES) assert.ok(shared.some(([sharedName]) => sharedName === name), name);
    }
  });

  test('the unified names keep the codes and messages clients saw before (PHI_BLOCKED, AUTHENTICATION_FAILED, INVALID_PARAMS)', () => {
    assert.deepEqual(new MeshRpcError('PHI_DETECTED').toErrorObject(), { code: -32012, message: 'Protected health information blocked' });
    assert.deepEqual(new MeshRpcError('UNAUTHORIZED').toErrorObject(), { code: -32001, message: 'Authentication Failed' });
    assert.deepEqual(new MeshRpcError('VALIDATION_ERROR').toErrorObject(), { code: -32602, message: 'Invalid params' });
    assert.deepEqual(new MeshRpcError('INTERNAL_ERROR').toErrorObject(), { code: -32603, message: 'Internal error' });
    assert.equal(new MeshRpcError('UNAUTHORIZED').httpStatus, 401);
    assert.equal(new MeshRpcError('PHI_DETECTED').httpStatus, 200);
  });

  test('codes are unique', () => {
    const codes = Object.values(MESH_ERRORS).map((entry) => entry.code);
    assert.equal(new Set(codes).size, codes.length);
  });

  test('the spec\'s and the contract\'s codes have their stated meaning', () => {
    assert.equal(MESH_ERRORS.PARSE_ERROR.code, -32700);
    assert.equal(MESH_ERRORS.METHOD_NOT_FOUND.code, -32601);
    assert.equal(MESH_ERRORS.UNAUTHORIZED.code, -32001);
    assert.equal(MESH_ERRORS.UNAUTHORIZED.message, 'Authentication Failed');
    assert.equal(MESH_ERRORS.CONSENT_DENIED.message, 'Consent Denied');
    assert.equal(MESH_ERRORS.TASK_NOT_FOUND.code, -32002);
    assert.equal(MESH_ERRORS.TASK_NOT_CANCELABLE.code, -32004);
    assert.equal(MESH_ERRORS.AGENT_UNKNOWN.code, -32010);
    assert.equal(MESH_ERRORS.AGENT_UNAVAILABLE.code, -32011);
    assert.equal(MESH_ERRORS.SESSION_NOT_FOUND.code, -32013, 'the avatar session error');
    for (const [name, entry] of Object.entries(MESH_ERRORS)) {
      assert.equal(entry.httpStatus, name === 'UNAUTHORIZED' ? 401 : 200, name);
    }
  });

  test('an error object carries data only when there is some', () => {
    assert.deepEqual(new MeshRpcError('TASK_NOT_FOUND').toErrorObject(), { code: -32002, message: 'Task not found' });
    assert.deepEqual(new MeshRpcError('VALIDATION_ERROR', 'bad', { x: 1 }).toErrorObject(), { code: -32602, message: 'bad', data: { x: 1 } });
  });
});
