import { ERROR_CODES, type ErrorCode, type JsonRpcMappedCode } from '../../core/errors.ts';

/** One mesh error: its JSON-RPC code and message, and the HTTP status it travels with. */
export type MeshErrorEntry = { readonly code: number; readonly httpStatus: number; readonly message: string };

/**
 * The mesh's own errors: JSON-RPC's framing errors (a payload that never reached a method) and the
 * mesh's domain errors (tasks, consent, the gateway's agents, avatar sessions), which the registry has
 * no use for.
 */
const MESH_OWN_ERRORS = {
  PARSE_ERROR: { code: -32700, httpStatus: 200, message: 'Parse error' },
  INVALID_REQUEST: { code: -32600, httpStatus: 200, message: 'Invalid Request' },
  METHOD_NOT_FOUND: { code: -32601, httpStatus: 200, message: 'Method not found' },
  TASK_NOT_FOUND: { code: -32002, httpStatus: 200, message: 'Task not found' },
  CONSENT_DENIED: { code: -32003, httpStatus: 200, message: 'Consent Denied' },
  TASK_NOT_CANCELABLE: { code: -32004, httpStatus: 200, message: 'Task not cancelable' },
  AGENT_UNKNOWN: { code: -32010, httpStatus: 200, message: 'Agent unknown to the gateway' },
  AGENT_UNAVAILABLE: { code: -32011, httpStatus: 200, message: 'Agent unavailable' },
  SESSION_NOT_FOUND: { code: -32013, httpStatus: 200, message: 'Session not found' },
} as const satisfies Record<string, MeshErrorEntry>;

export type MeshErrorName = JsonRpcMappedCode | keyof typeof MESH_OWN_ERRORS;

/**
 * The mesh's JSON-RPC error table (spec: Mesh JSON-RPC errors; contract §10): every entry of the
 * shared table (core/errors.ts) that has a JSON-RPC code, under its name there (`VALIDATION_ERROR`,
 * `UNAUTHORIZED`, `PHI_DETECTED`, `INTERNAL_ERROR`), and the mesh's own. docs/mesh.md is kept in step
 * by test/mesh/runtime/mesh-errors.test.ts. Only authentication failures change the HTTP status: every
 * other JSON-RPC error travels with HTTP 200. The names are Ward's, not the wire's: a client sees the
 * code, the message and `data`.
 */
export const MESH_ERRORS: Readonly<Record<MeshErrorName, MeshErrorEntry>> = Object.freeze({
  ...sharedEntries(),
  ...MESH_OWN_ERRORS,
});

function sharedEntries(): Record<JsonRpcMappedCode, MeshErrorEntry> {
  const entries: [ErrorCode, MeshErrorEntry][] = [];
  for (const [name, spec] of Object.entries(ERROR_CODES)) {
    if (!('jsonRpc' in spec)) continue;
    entries.push([name as ErrorCode, { ...spec.jsonRpc, httpStatus: spec.status === 401 ? 401 : 200 }]);
  }
  return Object.fromEntries(entries) as Record<JsonRpcMappedCode, MeshErrorEntry>;
}

/** The `error` member of a JSON-RPC error response. */
export type JsonRpcErrorObject = { code: number; message: string; data?: unknown };

/**
 * An expected mesh failure: thrown by protocol and agent code, turned into a JSON-RPC error by the
 * dispatcher. Anything else thrown becomes -32603 with no detail (internals are never exposed).
 */
export class MeshRpcError extends Error {
  readonly errorName: MeshErrorName;
  readonly data: unknown;

  constructor(errorName: MeshErrorName, message?: string, data?: unknown) {
    super(message ?? MESH_ERRORS[errorName].message);
    this.name = 'MeshRpcError';
    this.errorName = errorName;
    this.data = data;
  }

  get code(): number {
    return MESH_ERRORS[this.errorName].code;
  }

  get httpStatus(): number {
    return MESH_ERRORS[this.errorName].httpStatus;
  }

  toErrorObject(): JsonRpcErrorObject {
    return meshErrorObject(this.errorName, this.message, this.data);
  }
}

/** Builds the `error` member for a table entry; the one place that decides its shape. */
export function meshErrorObject(errorName: MeshErrorName, message?: string, data?: unknown): JsonRpcErrorObject {
  const entry = MESH_ERRORS[errorName];
  return data === undefined
    ? { code: entry.code, message: message ?? entry.message }
    : { code: entry.code, message: message ?? entry.message, data };
}

export function isMeshRpcError(value: unknown): value is MeshRpcError {
  return value instanceof MeshRpcError;
}
