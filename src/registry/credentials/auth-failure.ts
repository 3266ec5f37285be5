// Why a credential was refused, and the WWW-Authenticate challenge that tells the client so. Leaf module:
// no Fastify, no jose; the HTTP layer turns an AuthFailure into a 401 (or 503) and this header.
import { authChallenge } from '../../core/http/auth-challenge.ts';

/** The authentication schemes a challenge can name (RFC 6750 §3, RFC 9449 §7.1). */
export type AuthScheme = 'Bearer' | 'DPoP';

/** The JWS algorithms accepted for access tokens and DPoP proofs (contract §7). */
export const AUTH_ALGORITHMS = ['ES256', 'EdDSA', 'RS256'] as const;

/**
 * Every reason a credential can be refused, with the OAuth error code its challenge carries and the
 * HTTP status. `error: undefined` means the challenge carries no error (RFC 6750 §3.1: a request with
 * no credential gets a bare challenge). `unavailable` is the registry's fault (JWKS or replay cache
 * unreachable), so it is a retryable 503, never a 401 that would tell the client its token is bad.
 */
export const AUTH_FAILURE_REASONS = {
  missing_credential: { error: undefined, status: 401 },
  invalid_request: { error: 'invalid_request', status: 401 },
  malformed: { error: 'invalid_token', status: 401 },
  bad_signature: { error: 'invalid_token', status: 401 },
  expired: { error: 'invalid_token', status: 401 },
  not_yet_valid: { error: 'invalid_token', status: 401 },
  wrong_issuer: { error: 'invalid_token', status: 401 },
  wrong_audience: { error: 'invalid_token', status: 401 },
  alg_not_allowed: { error: 'invalid_token', status: 401 },
  unknown_key: { error: 'invalid_token', status: 401 },
  binding_mismatch: { error: 'invalid_token', status: 401 },
  scheme_mismatch: { error: 'invalid_token', status: 401 },
  proof_invalid: { error: 'invalid_dpop_proof', status: 401 },
  proof_wrong_method: { error: 'invalid_dpop_proof', status: 401 },
  proof_wrong_url: { error: 'invalid_dpop_proof', status: 401 },
  proof_wrong_ath: { error: 'invalid_dpop_proof', status: 401 },
  proof_stale: { error: 'invalid_dpop_proof', status: 401 },
  proof_replayed: { error: 'invalid_dpop_proof', status: 401 },
  use_dpop_nonce: { error: 'use_dpop_nonce', status: 401 },
  unavailable: { error: undefined, status: 503 },
} as const satisfies Record<
  string,
  { error: 'invalid_request' | 'invalid_token' | 'invalid_dpop_proof' | 'use_dpop_nonce' | undefined; status: 401 | 503 }
>;

/** A literal union so a `switch` over the reason narrows. */
export type AuthFailureReason = keyof typeof AUTH_FAILURE_REASONS;

/**
 * A refused credential. The message is written for the client and is fixed text chosen here: it never
 * contains the token, the proof or any attacker-chosen value from them.
 */
export class AuthFailure extends Error {
  readonly reason: AuthFailureReason;
  readonly scheme: AuthScheme;
  /** Headers the refusal carries besides the challenge (`DPoP-Nonce` with `use_dpop_nonce`). */
  headers: Record<string, string> = {};

  /** `options.cause` is for the operator's log (e.g. why the JWKS fetch failed); it is never sent. */
  constructor(
    reason: AuthFailureReason,
    message: string,
    scheme: AuthScheme = 'Bearer',
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'AuthFailure';
    this.reason = reason;
    this.scheme = scheme;
  }

  /** 401, or 503 when the registry could not check the credential (`unavailable`). */
  get status(): 401 | 503 {
    return AUTH_FAILURE_REASONS[this.reason].status;
  }
}

// RFC 6750 §3: error_description may hold only %x20-21 / %x23-5B / %x5D-7E, so no quote or backslash.
/**
 * The `WWW-Authenticate` value for a failure: `Bearer realm="ward", error="invalid_token",
 * error_description="…"` (RFC 6750 §3), or for DPoP `DPoP realm="ward", error="invalid_dpop_proof",
 * error_description="…", algs="ES256 EdDSA RS256"` (RFC 9449 §7.1). `algs` is only sent with DPoP.
 */
export function wwwAuthenticate(
  failure: AuthFailure,
  realm = 'ward',
  algs: readonly string[] = AUTH_ALGORITHMS,
): string {
  const { error } = AUTH_FAILURE_REASONS[failure.reason];
  return authChallenge({
    scheme: failure.scheme,
    realm,
    ...(error === undefined ? {} : { error, description: failure.message }),
    ...(failure.scheme === 'DPoP' ? { algs } : {}),
  });
}
