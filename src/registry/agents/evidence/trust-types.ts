// Types and limits shared by the trust validators. Kept apart from trust-validation.ts so the
// per-section validators can import them without a cycle.
import type { KeyObject } from 'node:crypto';

/**
 * Machine-readable reason for one trust-validation problem.
 *
 * - `CERT_UNPARSEABLE`: not a single PEM or base64 DER X.509 certificate (also: list or element too large).
 * - `CERT_EXPIRED` / `CERT_NOT_YET_VALID`: `now` is after `validTo` / before `validFrom`.
 * - `SIGNATURE_MALFORMED`: not a compact JWS with a JSON-object header and payload (also: list or element too large).
 * - `SIGNATURE_ALG_FORBIDDEN`: `alg` outside RS256, PS256, ES256, ES384, EdDSA (`none`, `HS*`, ...).
 * - `SIGNATURE_KEY_UNKNOWN`: no key from the record's certificates, its jwks or the owner's registry fits;
 *   keys offered only by the JWS header (`jku`, `x5u`, `jwk`, `x5c`) are never trusted.
 * - `SIGNATURE_INVALID`: candidate keys exist but none verifies the signature.
 * - `SIGNATURE_BINDING_MISMATCH`: `sub`, `display_name`, `jurisdiction` or `org_id` names another record.
 * - `SIGNATURE_EXPIRED`: outside the `exp`/`nbf` window (60 s skew).
 * - `ATTESTATION_MALFORMED`: not a compact JWT with JSON header and claims, or no string `iss` (also: too large).
 * - `ATTESTATION_ISSUER_UNKNOWN`: `iss` is not one of the known issuers.
 * - `ATTESTATION_INVALID`: forbidden alg, no issuer key fits or verifies, `iat` in the future, or binding mismatch.
 * - `ATTESTATION_EXPIRED`: outside the `exp`/`nbf` window (60 s skew).
 * - `JWKS_INVALID_KEY`: a jwks key that does not import as a usable public key (also: too many keys).
 * - `JWKS_PRIVATE_KEY`: a jwks key carrying private or symmetric members (`d`, `p`, `q`, `dp`, `dq`, `qi`, `oth`, `k`).
 */
export type TrustValidationErrorCode =
  | 'CERT_UNPARSEABLE'
  | 'CERT_EXPIRED'
  | 'CERT_NOT_YET_VALID'
  | 'SIGNATURE_MALFORMED'
  | 'SIGNATURE_ALG_FORBIDDEN'
  | 'SIGNATURE_KEY_UNKNOWN'
  | 'SIGNATURE_INVALID'
  | 'SIGNATURE_BINDING_MISMATCH'
  | 'SIGNATURE_EXPIRED'
  | 'ATTESTATION_MALFORMED'
  | 'ATTESTATION_ISSUER_UNKNOWN'
  | 'ATTESTATION_INVALID'
  | 'ATTESTATION_EXPIRED'
  | 'JWKS_INVALID_KEY'
  | 'JWKS_PRIVATE_KEY';

/**
 * One trust-validation problem. `pointer` is an RFC 6901 JSON pointer into the agent record
 * (for example `/trust/certificates/0`); `message` is plain text and never echoes the submitted element.
 */
export type TrustValidationError = {
  code: TrustValidationErrorCode;
  pointer: string;
  message: string;
};

/** A JSON Web Key as submitted: an arbitrary JSON object until it has been checked. */
export type JwkObject = Record<string, unknown>;

/** A JWK Set as submitted. */
export type JwkSet = { keys: JwkObject[] };

/** Fields of the record that signed payloads must agree with when they mention them. */
export type TrustBinding = {
  /** Absent on first registration, before the registry has assigned an id. */
  agent_id?: string;
  display_name: string;
  jurisdiction: string;
  /** Owner organisation; a payload `org_id` is only checked when this is known. */
  org_id?: string;
};

/** Upper bounds on trust material; past them the validator reports an error instead of doing the work. */
export const TRUST_LIMITS = {
  certificates: 16,
  signatures: 16,
  attestations: 16,
  jwksKeys: 32,
  /** Per element, in UTF-8 bytes (a jwks key is measured as its JSON serialisation). */
  elementBytes: 16 * 1024,
} as const;

/** Clock skew tolerated on `exp`, `nbf` and `iat`. */
export const CLOCK_SKEW_SECONDS = 60;

/** JWS algorithms accepted anywhere in trust material. Everything else, including `none` and HMAC, is refused. */
export const ALLOWED_JWS_ALGS = ['RS256', 'PS256', 'ES256', 'ES384', 'EdDSA'] as const;

/** One of {@link ALLOWED_JWS_ALGS}. */
export type AllowedJwsAlg = (typeof ALLOWED_JWS_ALGS)[number];

/** A public key the validator may verify with, plus the JWK metadata that restricts its use. */
export type TrustedKey = {
  key: KeyObject;
  kid?: string;
  /** JWK `alg`, when the key pins one. */
  alg?: string;
  /** False when the JWK says it is not for signatures (`use` other than `sig`, or `key_ops` without `verify`). */
  forSignatures: boolean;
};

/** True when `value` is a plain JSON object (not null, not an array). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True when a submitted string element exceeds {@link TRUST_LIMITS.elementBytes}. */
export function isOversized(value: string): boolean {
  // A UTF-16 length over the limit already implies more bytes than that; skip the byte count then.
  return (
    value.length > TRUST_LIMITS.elementBytes || Buffer.byteLength(value, 'utf8') > TRUST_LIMITS.elementBytes
  );
}

/** How a submitted list is bounded: past `limit` elements, one error (`code` at `pointer`) names the limit. */
export type ListLimit = { code: TrustValidationErrorCode; pointer: string; noun: string; limit: number };

/** The elements of a submitted list that are checked: its first `limit`; any more are reported in `errors`. */
export function elementsToCheck(list: unknown[], bound: ListLimit, errors: TrustValidationError[]): unknown[] {
  if (list.length > bound.limit) {
    errors.push({
      code: bound.code,
      pointer: bound.pointer,
      message: `At most ${bound.limit} ${bound.noun} are accepted; only the first ${bound.limit} were checked.`,
    });
  }
  return list.slice(0, bound.limit);
}

/**
 * The elements of `trust.<section>` to check (at most its {@link TRUST_LIMITS} entry), or undefined when
 * the section is not an array. Either problem is reported in `errors` with the section's `code`.
 */
export function sectionElements(
  value: unknown,
  section: 'certificates' | 'signatures' | 'attestations',
  code: TrustValidationErrorCode,
  errors: TrustValidationError[],
): unknown[] | undefined {
  const pointer = `/trust/${section}`;
  if (!Array.isArray(value)) {
    errors.push({ code, pointer, message: `${section} must be an array.` });
    return undefined;
  }
  return elementsToCheck(value, { code, pointer, noun: section, limit: TRUST_LIMITS[section] }, errors);
}

/** A problem with one element of a trust section, before its pointer is known. */
export type ElementProblem = Omit<TrustValidationError, 'pointer'>;

/**
 * Checks each element of `trust.<section>` (as {@link sectionElements} bounds it) with `check`, adds
 * one error per element that fails, at its pointer, and returns how many passed.
 */
export async function verifySection(
  value: unknown,
  section: 'signatures' | 'attestations',
  code: TrustValidationErrorCode,
  errors: TrustValidationError[],
  check: (element: unknown) => Promise<ElementProblem | undefined>,
): Promise<number> {
  let verified = 0;
  for (const [index, element] of (sectionElements(value, section, code, errors) ?? []).entries()) {
    const problem = await check(element);
    if (problem === undefined) verified += 1;
    else errors.push({ ...problem, pointer: `/trust/${section}/${index}` });
  }
  return verified;
}
