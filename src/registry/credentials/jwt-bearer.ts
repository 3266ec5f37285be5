// Access-token verification for REGISTRY_AUTH_MODE=jwt (and the token half of mtls and dpop). jose does
// the cryptography and the JWKS fetching; this module fixes the policy and names each failure.
import { createHash } from 'node:crypto';
import {
  createRemoteJWKSet,
  errors,
  jwtVerify,
  type CryptoKey,
  type JWTPayload,
  type JWTVerifyGetKey,
  type JWTVerifyOptions,
  type JWTVerifyResult,
} from 'jose';
import { AUTH_ALGORITHMS, AuthFailure, type AuthFailureReason, type AuthScheme } from './auth-failure.ts';

/** What a verified access token says about its caller. */
export type VerifiedToken = {
  subject: string;
  /** From the space-separated `scope` claim, else the `scp` array. */
  scopes: string[];
  claims: Record<string, unknown>;
  /** `jti`, or the base64url SHA-256 of the token when it has none: a stable id that is not the token. */
  tokenId: string;
};

/** Verifies access tokens; every refusal is an {@link AuthFailure}. */
export type JwtVerifier = { verify(token: string): Promise<VerifiedToken> };

/** Options of {@link createJwtVerifier}. */
export type JwtVerifierOptions = {
  /** `REGISTRY_JWT_JWKS_URI`: the only source of keys (header `jku`, `x5u`, `jwk` are never used). */
  jwksUri: string | URL;
  /** `REGISTRY_JWT_ISSUER`: the exact `iss` required. */
  issuer: string;
  /** `REGISTRY_JWT_AUDIENCE`: must appear in `aud`. */
  audience: string;
  /** Allowed clock skew for `exp`/`nbf`; default 60 (contract §7). */
  clockToleranceSec?: number;
  now?: () => Date;
  /** Timeout of one JWKS fetch; default 2000. */
  fetchTimeoutMs?: number;
  /** Least time between two JWKS fetches caused by unknown `kid`s; default 30000. */
  cooldownMs?: number;
  /** How long a fetched JWKS is used before it is fetched again; default 600000. */
  cacheMaxAgeMs?: number;
  /** The scheme failures are reported under: `DPoP` when the token arrives as `Authorization: DPoP`. */
  scheme?: AuthScheme;
};

// A JWT far larger than any real access token is refused before parsing, as cheap DoS hygiene.
const MAX_TOKEN_LENGTH = 16_384;

const FAILURE_MESSAGES = {
  malformed: 'The access token is not a well-formed JWT.',
  bad_signature: 'The access token signature does not verify.',
  expired: 'The access token has expired.',
  not_yet_valid: 'The access token is not valid yet.',
  wrong_issuer: 'The access token was not issued by the trusted issuer.',
  wrong_audience: 'The access token is not meant for this registry.',
  alg_not_allowed: `The access token must be signed with ${AUTH_ALGORITHMS.join(', ')}.`,
  unknown_key: 'The access token is signed with a key the issuer does not publish.',
  unavailable: "The issuer's keys cannot be fetched; try again later.",
} as const satisfies Partial<Record<AuthFailureReason, string>>;

type JoseOutcome = keyof typeof FAILURE_MESSAGES | 'unexpected';

function classify(error: unknown): JoseOutcome {
  if (error instanceof errors.JWTExpired) return 'expired';
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.reason === 'missing') return 'malformed';
    if (error.claim === 'iss') return 'wrong_issuer';
    if (error.claim === 'aud') return 'wrong_audience';
    if (error.claim === 'nbf') return 'not_yet_valid';
    return 'malformed';
  }
  if (error instanceof errors.JOSEAlgNotAllowed) return 'alg_not_allowed';
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'bad_signature';
  if (error instanceof errors.JWKSNoMatchingKey) return 'unknown_key';
  // Anything else jose refuses (an unknown `crit` member, an unsupported header or key type…) is about
  // the token, which the caller chose: a 401, never a 500 with the caller's header names in a stack trace.
  if (error instanceof errors.JOSEError) return 'malformed';
  return 'unexpected';
}

/** Thrown by the key resolver so that a JWKS outage is not mistaken for a bad token. */
class KeySourceDown extends Error {}

function scopesOf(claims: JWTPayload): string[] | undefined {
  const { scope, scp } = claims;
  if (typeof scope === 'string') return scope.split(' ').filter((entry) => entry.length > 0);
  if (scope !== undefined) return undefined;
  if (Array.isArray(scp) && scp.every((entry) => typeof entry === 'string')) return [...scp];
  if (typeof scp === 'string') return scp.split(' ').filter((entry) => entry.length > 0);
  return scp === undefined ? [] : undefined;
}

/**
 * A verifier of JWT access tokens against the issuer's JWKS (contract §7, RFC 9068 style). Accepts only
 * RS256, ES256 and EdDSA, so `alg: none`, HS256 and the RSA-public-key-as-HMAC-secret confusion fail
 * before any key is looked at. Requires `iss`, `aud`, `sub` and `exp`. The JWKS is fetched from
 * `jwksUri` only (redirects not followed), cached, and fetched again for an unknown `kid` at most once
 * per `cooldownMs`, so a flood of made-up `kid`s cannot hammer the issuer.
 */
export function createJwtVerifier(options: JwtVerifierOptions): JwtVerifier {
  const url = new URL(options.jwksUri);
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new Error('jwksUri must be an http(s) URL');
  if (!options.issuer || !options.audience) throw new Error('issuer and audience are required');
  const scheme = options.scheme ?? 'Bearer';
  const now = options.now ?? (() => new Date());
  const remote = createRemoteJWKSet(url, {
    timeoutDuration: options.fetchTimeoutMs ?? 2000,
    cooldownDuration: options.cooldownMs ?? 30_000,
    cacheMaxAge: options.cacheMaxAgeMs ?? 600_000,
  });
  const keys: JWTVerifyGetKey = async (header, token) => {
    try {
      return await remote(header, token);
    } catch (error) {
      // "No such kid" and "several keys fit" are about the token; anything else is the JWKS source.
      if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys)
        throw error;
      throw new KeySourceDown('JWKS unavailable', { cause: error });
    }
  };
  const fail = (reason: keyof typeof FAILURE_MESSAGES, cause?: unknown) =>
    new AuthFailure(reason, FAILURE_MESSAGES[reason], scheme, cause === undefined ? undefined : { cause });

  async function verifySignedToken(token: string): Promise<JWTVerifyResult> {
    const verifyOptions: JWTVerifyOptions = {
      algorithms: [...AUTH_ALGORITHMS],
      issuer: options.issuer,
      audience: options.audience,
      requiredClaims: ['sub', 'exp'],
      clockTolerance: options.clockToleranceSec ?? 60,
      currentDate: now(),
    };
    try {
      return await jwtVerify(token, keys, verifyOptions);
    } catch (error) {
      if (!(error instanceof errors.JWKSMultipleMatchingKeys)) throw error;
      // A token without `kid` that several published keys could have signed: try each in turn.
      for await (const key of error as unknown as AsyncIterable<CryptoKey>) {
        try {
          return await jwtVerify(token, key, verifyOptions);
        } catch (inner) {
          if (!(inner instanceof errors.JWSSignatureVerificationFailed)) throw inner;
        }
      }
      throw new errors.JWSSignatureVerificationFailed();
    }
  }

  return {
    async verify(token) {
      if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_LENGTH)
        throw fail('malformed');
      let result: JWTVerifyResult;
      try {
        result = await verifySignedToken(token);
      } catch (error) {
        if (error instanceof KeySourceDown) throw fail('unavailable', error.cause);
        const outcome = classify(error);
        if (outcome === 'unexpected') throw error;
        throw fail(outcome);
      }
      const claims = result.payload;
      const scopes = scopesOf(claims);
      if (typeof claims.sub !== 'string' || claims.sub.length === 0 || scopes === undefined)
        throw fail('malformed');
      const tokenId =
        typeof claims.jti === 'string' && claims.jti.length > 0
          ? claims.jti
          : createHash('sha256').update(token).digest('base64url');
      return { subject: claims.sub, scopes, claims: { ...claims }, tokenId };
    },
  };
}

/**
 * Refuses a sender-constrained token presented as a plain Bearer token: one bound to a DPoP key
 * (`cnf.jkt`, RFC 9449 §7.2) or to a client certificate (`cnf.x5t#S256`, RFC 8705 §3) is only worth
 * its binding, so without the proof or the certificate it must not be accepted.
 */
export function assertNotSenderConstrained(claims: Record<string, unknown>): void {
  const cnf = claims['cnf'];
  if (typeof cnf === 'object' && cnf !== null && ('jkt' in cnf || 'x5t#S256' in cnf)) {
    throw new AuthFailure(
      'scheme_mismatch',
      'The access token is bound to a key or certificate this request does not prove.',
    );
  }
}
