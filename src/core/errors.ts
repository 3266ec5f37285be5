/** How an error travels as a JSON-RPC error object (JSON-RPC 2.0 §5.1): its code and fixed message. */
export type JsonRpcMapping = { readonly code: number; readonly message: string };

/**
 * The one table of Ward's error codes. Each code is stable and never reused; its meaning, HTTP status
 * and whether a client may retry are defined here once, and so is its JSON-RPC code where the mesh
 * answers the same error (`jsonRpc`; the mesh's table, mesh/runtime/mesh-errors.ts, is these entries
 * plus its own). The mappings: HTTP, {@link errorEnvelope} with `status`; JSON-RPC, `jsonRpc`; MCP,
 * every code as a tool error (mcp/tool-result.ts). test/core/errors.test.ts keeps this table and
 * docs/errors.md in step.
 */
export const ERROR_CODES = {
  // Request shape (contract §2)
  VALIDATION_ERROR: {
    status: 422,
    retryable: false,
    title: 'The request failed validation.',
    jsonRpc: { code: -32602, message: 'Invalid params' },
  },
  MALFORMED_JSON: { status: 400, retryable: false, title: 'The request body is not valid JSON.' },
  BAD_REQUEST: { status: 400, retryable: false, title: 'The request is malformed.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, retryable: false, title: 'The body must be application/json.' },
  PAYLOAD_TOO_LARGE: { status: 413, retryable: false, title: 'The body is larger than 1 MiB.' },
  HEADERS_TOO_LARGE: { status: 431, retryable: false, title: 'The request headers are too large.' },
  ROUTE_NOT_FOUND: { status: 404, retryable: false, title: 'No such route.' },
  PHI_DETECTED: {
    status: 422,
    retryable: false,
    title: 'The request carries protected health information.',
    jsonRpc: { code: -32012, message: 'Protected health information blocked' },
  },
  // Idempotency and concurrency (contract §2)
  IDEMPOTENCY_KEY_REQUIRED: { status: 400, retryable: false, title: 'X-Idempotency-Key is required.' },
  IDEMPOTENCY_KEY_REUSED: { status: 409, retryable: false, title: 'The key was used with another body.' },
  IDEMPOTENCY_KEY_IN_PROGRESS: { status: 409, retryable: true, title: 'A request with this key is running.' },
  PRECONDITION_REQUIRED: { status: 428, retryable: false, title: 'If-Match is required.' },
  PRECONDITION_FAILED: { status: 412, retryable: false, title: 'If-Match does not match the current version.' },
  VERSION_CONFLICT: { status: 409, retryable: false, title: 'The record changed during the write.' },
  // Agents (contract §3)
  AGENT_NOT_FOUND: { status: 404, retryable: false, title: 'No such agent.' },
  AGENT_CONFLICT: { status: 409, retryable: false, title: 'The organisation already has an agent of that name.' },
  INVALID_STATE_TRANSITION: { status: 409, retryable: false, title: 'The status change is not allowed.' },
  AGENT_NOT_MUTABLE: { status: 409, retryable: false, title: 'A revoked or retired agent cannot be updated.' },
  // Registration from an A2A agent card (docs/mesh.md, "Signed cards"): each refusal writes nothing
  CARD_UNREACHABLE: { status: 422, retryable: false, title: 'The agent card could not be fetched.' },
  CARD_TOO_LARGE: { status: 422, retryable: false, title: 'The agent card is larger than the registry reads.' },
  CARD_INVALID: { status: 422, retryable: false, title: 'The document is not an A2A agent card the registry can map.' },
  CARD_REDIRECT_OFF_ORIGIN: { status: 422, retryable: false, title: "The card's URL redirects to another origin." },
  CARD_ENDPOINT_OFF_ORIGIN: { status: 422, retryable: false, title: "The card's interfaces are not on the card's origin." },
  CARD_PRIVATE_ADDRESS: { status: 422, retryable: false, title: 'The card is on a private, loopback or link-local address.' },
  CARD_UNSIGNED: { status: 422, retryable: false, title: 'The card carries no signature and signatures are required.' },
  CARD_SIGNATURE_INVALID: { status: 422, retryable: false, title: "The card's signature does not verify: the card changed after signing." },
  CARD_SIGNATURE_UNTRUSTED: { status: 422, retryable: false, title: "The card is signed with a key not published on the card's origin." },
  // Discovery, routing and trust (contract §4, §5)
  AGENT_NOT_ACTIVE: { status: 409, retryable: false, title: 'The agent is not active and trust-validated.' },
  NO_ROUTE: { status: 422, retryable: false, title: 'No endpoint meets the request.' },
  REGISTRY_NOT_FOUND: { status: 404, retryable: false, title: 'No such registry.' },
  // Federation (contract §5)
  REGISTRY_CONFLICT: { status: 409, retryable: false, title: 'A registry of that name, a sovereign for that country, or an active child at that address exists.' },
  TIER_VIOLATION: { status: 422, retryable: false, title: "The registry tiers do not allow this." },
  REGISTRY_REVOKED: { status: 403, retryable: false, title: 'The registry has been revoked by its parent.' },
  DEPENDENCY_UNAVAILABLE: { status: 503, retryable: true, title: 'A service this request needs did not answer.' },
  // Computer use (contract §12)
  URL_NOT_ALLOWED: { status: 422, retryable: false, title: 'The address is outside COMPUTER_USE_ALLOWED_ORIGINS.' },
  RUN_NOT_FOUND: { status: 404, retryable: false, title: 'No such computer-use run, or no such turn of it.' },
  // The FHIR directory (docs/fhir.md): answered as an OperationOutcome there
  RESOURCE_NOT_FOUND: { status: 404, retryable: false, title: 'No FHIR resource of this type with this id.' },
  NOT_ACCEPTABLE: { status: 406, retryable: false, title: 'The answer can only be JSON (application/fhir+json).' },
  // Event stream and transparency ledger (contract §6)
  CURSOR_EXPIRED: { status: 410, retryable: false, title: 'The events after this cursor are no longer retained.' },
  LEDGER_ENTRY_NOT_FOUND: { status: 404, retryable: false, title: 'No ledger entry with this leaf hash.' },
  // Authentication, keys and limits (contract §7)
  UNAUTHORIZED: {
    status: 401,
    retryable: false,
    title: 'A valid credential is required.',
    // The message is the contract's (§10).
    jsonRpc: { code: -32001, message: 'Authentication Failed' },
  },
  INSUFFICIENT_SCOPE: { status: 403, retryable: false, title: 'The credential lacks the scope this operation needs.' },
  ORG_MISMATCH: { status: 403, retryable: false, title: "The credential's organisation does not own this resource." },
  ORG_REQUIRED: { status: 403, retryable: false, title: 'The credential names no organisation, so it cannot write agents.' },
  TIER_LIMIT_EXCEEDED: { status: 403, retryable: false, title: "The organisation has reached its tier's agent limit." },
  TIER_FEATURE_UNAVAILABLE: { status: 403, retryable: false, title: "The caller's tier does not include this feature." },
  API_KEY_NOT_FOUND: { status: 404, retryable: false, title: 'No such API key.' },
  RATE_LIMITED: { status: 429, retryable: true, title: "The key is over its tier's rate limit." },
  QUOTA_EXCEEDED: { status: 429, retryable: true, title: "The key has used its tier's requests for this UTC day." },
  // Server side
  INTERNAL_ERROR: {
    status: 500,
    retryable: true,
    title: 'The server failed to complete the request.',
    jsonRpc: { code: -32603, message: 'Internal error' },
  },
  SERVICE_UNAVAILABLE: { status: 503, retryable: true, title: 'The service is not ready.' },
} as const satisfies Record<string, { status: number; retryable: boolean; title: string; jsonRpc?: JsonRpcMapping }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The codes that have a JSON-RPC code: the errors the registry and the mesh share. */
export type JsonRpcMappedCode = {
  [C in ErrorCode]: (typeof ERROR_CODES)[C] extends { jsonRpc: JsonRpcMapping } ? C : never;
}[ErrorCode];

/** The registry's error envelope body (spec: Error envelope). */
export type ErrorEnvelope = {
  error: {
    code: ErrorCode;
    message: string;
    details: Record<string, unknown>;
    retryable: boolean;
    retry_after_ms: number | null;
  };
};

/**
 * An expected failure caused by the caller's input or the state of the registry. Thrown by domain
 * code and turned into the envelope by the HTTP layer. Programmer errors stay plain `Error`s.
 */
export class WardError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;
  readonly retryAfterMs: number | null;
  /** Response headers the error needs (WWW-Authenticate on a 401). */
  headers: Record<string, string> = {};

  constructor(
    code: ErrorCode,
    message?: string,
    details: Record<string, unknown> = {},
    retryAfterMs: number | null = null,
  ) {
    super(message ?? ERROR_CODES[code].title);
    this.name = 'WardError';
    this.code = code;
    this.details = details;
    this.retryAfterMs = retryAfterMs;
  }

  get status(): number {
    return ERROR_CODES[this.code].status;
  }
}

/** Builds the envelope for a code; the one place that decides its shape. */
export function errorEnvelope(
  code: ErrorCode,
  message: string = ERROR_CODES[code].title,
  details: Record<string, unknown> = {},
  retryAfterMs: number | null = null,
): ErrorEnvelope {
  return {
    error: { code, message, details, retryable: ERROR_CODES[code].retryable, retry_after_ms: retryAfterMs },
  };
}

export function isWardError(value: unknown): value is WardError {
  return value instanceof WardError;
}
