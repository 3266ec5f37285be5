// The federation statement formats of docs/federation.md: the delegation statement a parent signs about a
// child, and the short-lived status token an issuer signs about a statement's subject. Writing and reading
// both live here so the issuer and the verifier cannot drift apart.
import { hasPrivateKeyMaterial, type PublishedJwk } from '../core/crypto/key-set.ts';
import type { RegistrySigner } from '../core/crypto/signer-types.ts';
import { newUlid } from '../core/ids.ts';
import { normaliseJurisdiction } from '../core/jurisdictions.ts';

export const DELEGATION_TYP = 'ward-delegation+jwt';
export const STATUS_TYP = 'ward-status+jwt';
/** Status tokens are OCSP-like answers: short enough that a revocation shows within minutes. */
export const STATUS_TOKEN_LIFETIME_SECONDS = 300;

export type RegistryTier = 'root' | 'sovereign' | 'organisational';
/** The tiers a delegation statement can name; the root is nobody's child. */
export type ChildTier = Exclude<RegistryTier, 'root'>;

/** OpenID-Federation-style limits the parent puts on the child and everything below it. */
export type DelegationConstraints = {
  /** How many further statements may follow below `sub`. */
  max_path_length: number;
  /** Upper-case ISO 3166-1 alpha-2 codes `sub` and everything below it may use. */
  allowed_jurisdictions: string[];
};

export type DelegationStatementClaims = {
  iss: string;
  sub: string;
  iat: number;
  nbf: number;
  exp: number;
  jti: string;
  tier: ChildTier;
  jurisdiction: string;
  jwks: { keys: PublishedJwk[] };
  /** Where the child answers; null when it was registered without one. */
  api_base_url: string | null;
  constraints: DelegationConstraints;
};

export type RegistryStatus = 'active' | 'revoked';

export type StatusTokenClaims = {
  iss: string;
  sub: string;
  status: RegistryStatus;
  revoked_at: string | null;
  iat: number;
  exp: number;
};

export type DelegationStatementInput = Omit<DelegationStatementClaims, 'iat' | 'nbf' | 'exp' | 'jti'> & {
  now: Date;
  ttlSeconds: number;
};

/**
 * Signs a delegation statement (docs/federation.md, "Delegation statements") with the parent's
 * current key: `iat` = `nbf` = `now`, `exp` = `now + ttlSeconds`, a fresh ULID as `jti`.
 * Throws when `jwks` carries private key material: publishing it would be a programming error.
 */
export async function signDelegationStatement(signer: Pick<RegistrySigner, 'sign'>, input: DelegationStatementInput): Promise<string> {
  const { now, ttlSeconds, ...statement } = input;
  if (!(Number.isSafeInteger(ttlSeconds) && ttlSeconds > 0)) throw new RangeError('ttlSeconds must be a positive integer');
  if (statement.jwks.keys.some(hasPrivateKeyMaterial)) throw new Error('a delegation statement must not carry private key material');
  const iat = Math.floor(now.getTime() / 1000);
  const claims: DelegationStatementClaims = { ...statement, iat, nbf: iat, exp: iat + ttlSeconds, jti: newUlid(now.getTime()) };
  return signer.sign(claims, DELEGATION_TYP);
}

/** Signs the status token `GET /v1/federation/status` answers with; it lives {@link STATUS_TOKEN_LIFETIME_SECONDS}. */
export async function signStatusToken(
  signer: Pick<RegistrySigner, 'sign'>,
  status: Pick<StatusTokenClaims, 'iss' | 'sub' | 'status' | 'revoked_at'>,
  now: Date,
): Promise<string> {
  const iat = Math.floor(now.getTime() / 1000);
  const claims: StatusTokenClaims = {
    iss: status.iss,
    sub: status.sub,
    status: status.status,
    revoked_at: status.revoked_at,
    iat,
    exp: iat + STATUS_TOKEN_LIFETIME_SECONDS,
  };
  return signer.sign(claims, STATUS_TYP);
}

/**
 * The constraints a parent of `parentTier` puts on a child in `childJurisdiction`: a sovereign may
 * delegate once more, an organisational registry not at all, and both stay in their own country.
 * Throws for an organisational parent, which accepts no children (contract §5).
 */
export function childConstraints(parentTier: RegistryTier, childJurisdiction: string): DelegationConstraints {
  const jurisdiction = normaliseJurisdiction(childJurisdiction);
  if (!jurisdiction) throw new RangeError(`not an ISO 3166-1 alpha-2 code: ${childJurisdiction}`);
  if (parentTier === 'organisational') throw new Error('an organisational registry delegates to no one');
  return { max_path_length: parentTier === 'root' ? 1 : 0, allowed_jurisdictions: [jurisdiction] };
}

/** The first of a key's `not_before`/`not_after` that is set but not a readable time, if any. */
export function unreadableWindowMember(key: Record<string, unknown>): 'not_before' | 'not_after' | undefined {
  return (['not_before', 'not_after'] as const).find((member) => {
    const value = key[member];
    return value !== undefined && value !== null && (typeof value !== 'string' || Number.isNaN(Date.parse(value)));
  });
}

/** Reads claims of a verified statement; the message says what is missing or wrong. */
export function readDelegationClaims(payload: unknown): { claims: DelegationStatementClaims } | { problem: string } {
  if (!isObject(payload)) return { problem: 'the payload is not a JSON object' };
  for (const claim of ['iss', 'sub', 'jti', 'jurisdiction'] as const) {
    if (typeof payload[claim] !== 'string') return { problem: `"${claim}" is missing or not a string` };
  }
  for (const claim of ['iat', 'nbf', 'exp'] as const) {
    if (!Number.isFinite(payload[claim])) return { problem: `"${claim}" is missing or not a NumericDate` };
  }
  if (payload.tier !== 'sovereign' && payload.tier !== 'organisational') return { problem: '"tier" is not sovereign or organisational' };
  // null: the child gave no address, so what it issues cannot be checked online (fail closed there).
  if (payload.api_base_url !== null && !(typeof payload.api_base_url === 'string' && isHttpUrl(payload.api_base_url))) {
    return { problem: '"api_base_url" is not an http(s) URL or null' };
  }
  const jwks = payload.jwks;
  if (!isObject(jwks) || !Array.isArray(jwks.keys) || !jwks.keys.every(isObject)) return { problem: '"jwks" is not a JWK Set' };
  for (const key of jwks.keys as Record<string, unknown>[]) {
    const unreadable = unreadableWindowMember(key);
    if (unreadable) return { problem: `a key's "${unreadable}" is not an RFC 3339 time or null` };
  }
  const constraints = payload.constraints;
  if (
    !isObject(constraints) ||
    !(Number.isSafeInteger(constraints.max_path_length) && (constraints.max_path_length as number) >= 0) ||
    !Array.isArray(constraints.allowed_jurisdictions) ||
    !constraints.allowed_jurisdictions.every((code) => typeof code === 'string')
  ) {
    return { problem: '"constraints" needs a max_path_length (integer ≥ 0) and allowed_jurisdictions (strings)' };
  }
  return { claims: payload as DelegationStatementClaims };
}

/** Reads claims of a verified status token. */
export function readStatusClaims(payload: unknown): { claims: StatusTokenClaims } | { problem: string } {
  if (!isObject(payload)) return { problem: 'the payload is not a JSON object' };
  if (typeof payload.iss !== 'string' || typeof payload.sub !== 'string') return { problem: '"iss" or "sub" is missing' };
  if (payload.status !== 'active' && payload.status !== 'revoked') return { problem: '"status" is not active or revoked' };
  if (!Number.isFinite(payload.exp)) return { problem: '"exp" is missing or not a NumericDate' };
  if (payload.revoked_at !== undefined && payload.revoked_at !== null && typeof payload.revoked_at !== 'string') {
    return { problem: '"revoked_at" is not a time or null' };
  }
  return { claims: payload as StatusTokenClaims };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === 'https:' || protocol === 'http:';
  } catch {
    return false;
  }
}
