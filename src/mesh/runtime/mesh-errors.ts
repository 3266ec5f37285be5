/**
 * The one table of mesh JSON-RPC error codes (spec: Mesh JSON-RPC errors; contract §10). Each name's
 * code, message and HTTP status are defined here once; docs/mesh.md is kept in step by
 * test/mesh/runtime/mesh-errors.test.ts. Only authentication failures change the HTTP status: every
 * other JSON-RPC error travels with HTTP 200.
 */
export const MESH_ERRORS = {
  PARSE_ERROR: { code: -32700, httpStatus: 200, message: 'Parse error' },
  INVALID_REQUEST: { code: -32600, httpStatus: 200, message: 'Invalid Request' },
  METHOD_NOT_FOUND: { code: -32601, httpStatus: 200, message: 'Method not found' },
  INVALID_PARAMS: { code: -32602, httpStatus: 200, message: 'Invalid params' },
  INTERNAL_ERROR: { code: -32603, httpStatus: 200, message: 'Internal error' },
  AUTHENTICATION_FAILED: { code: -32001, httpStatus: 401, message: 'Authentication Failed' },
  TASK_NOT_FOUND: { code: -32002, httpStatus: 200, message: 'Task not found' },
  CONSENT_DENIED: { code: -32003, httpStatus: 200, message: 'Consent Denied' },
  TASK_NOT_CANCELABLE: { code: -32004, httpStatus: 200, message: 'Task not cancelable' },
  AGENT_UNKNOWN: { code: -32010, httpStatus: 200, message: 'Agent unknown to the gateway' },
  AGENT_UNAVAILABLE: { code: -32011, httpStatus: 200, message: 'Agent unavailable' },
  PHI_BLOCKED: { code: -32012, httpStatus: 200, message: 'Protected health information blocked' },
  SESSION_NOT_FOUND: { code: -32013, httpStatus: 200, message: 'Session not found' },
} as const satisfies Record<string, { code: number; httpStatus: number; message: string }>;

export type MeshErrorName = keyof typeof MESH_ERRORS;

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
