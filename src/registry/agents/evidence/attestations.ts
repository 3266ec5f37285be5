// Attestations: JWTs from issuers the caller knows, verified with that issuer's keys and nothing else.
import { importTrustedJwks, selectJwkKeys } from './jwks.ts';
import {
  CLOCK_SKEW_SECONDS,
  verifySection,
  type ElementProblem,
  type JwkObject,
  type TrustBinding,
  type TrustValidationError,
  type TrustedKey,
} from './trust-types.ts';
import { claimsProblem, parseJwsElement, verifyWithAnyKey, type ClaimsWording } from './jws.ts';

const ATTESTATION_CLAIMS: ClaimsWording = { noun: 'attestation', participle: 'attested', mismatch: 'ATTESTATION_INVALID', outsideWindow: 'ATTESTATION_EXPIRED' };

/** An attestation issuer the caller trusts, with the keys it signs with. */
export type KnownIssuer = { iss: string; jwks: { keys: JwkObject[] } };

/**
 * Validates `trust.attestations`: each must be a JWT whose `iss` is a known issuer, signed with an
 * allowed alg by one of that issuer's keys, inside its `exp`/`nbf`/`iat` window (60 s skew), and agreeing
 * with the record on any binding claim. Returns one error per bad element and how many verified.
 */
export async function checkAttestations(
  attestations: unknown,
  knownIssuers: ReadonlyArray<KnownIssuer>,
  binding: TrustBinding,
  now: Date,
): Promise<{ errors: TrustValidationError[]; verifiedCount: number }> {
  const errors: TrustValidationError[] = [];
  // Issuer keys are imported on first use only: the caller may know many issuers, a record cites few.
  const issuerKeys = new Map<string, TrustedKey[]>();
  const keysOf = (iss: string): TrustedKey[] | undefined => {
    const matching = knownIssuers.filter((issuer) => issuer.iss === iss);
    if (matching.length === 0) return undefined;
    let keys = issuerKeys.get(iss);
    if (keys === undefined) {
      keys = matching.flatMap((issuer) => importTrustedJwks(issuer.jwks));
      issuerKeys.set(iss, keys);
    }
    return keys;
  };
  const verifiedCount = await verifySection(attestations, 'attestations', 'ATTESTATION_MALFORMED', errors, (element) =>
    checkOne(element, keysOf, binding, now),
  );
  return { errors, verifiedCount };
}

async function checkOne(
  element: unknown,
  keysOf: (iss: string) => TrustedKey[] | undefined,
  binding: TrustBinding,
  now: Date,
): Promise<ElementProblem | undefined> {
  const parsed = parseJwsElement(element, 'An attestation', { malformed: 'ATTESTATION_MALFORMED', alg: 'ATTESTATION_INVALID' });
  if ('problem' in parsed) return parsed.problem;
  const { jws } = parsed;
  const iss = jws.payload['iss'];
  if (typeof iss !== 'string')
    return { code: 'ATTESTATION_MALFORMED', message: 'The attestation has no "iss" claim.' };
  const kid = jws.header['kid'];
  if (kid !== undefined && typeof kid !== 'string') {
    return { code: 'ATTESTATION_MALFORMED', message: 'The attestation "kid" must be a string.' };
  }
  const issuerKeys = keysOf(iss);
  if (issuerKeys === undefined) {
    return { code: 'ATTESTATION_ISSUER_UNKNOWN', message: 'The attestation issuer is not a known issuer.' };
  }
  const candidates = selectJwkKeys(issuerKeys, jws.alg, kid);
  if (candidates.length === 0) {
    return { code: 'ATTESTATION_INVALID', message: 'No key published by the issuer fits this attestation.' };
  }
  if (!(await verifyWithAnyKey(jws, candidates))) {
    return {
      code: 'ATTESTATION_INVALID',
      message: "The attestation does not verify with the issuer's keys.",
    };
  }
  const claims = claimsProblem(jws.payload, binding, now, ATTESTATION_CLAIMS);
  if (claims) return claims;
  const iat = jws.payload['iat'];
  if (typeof iat === 'number' && iat > now.getTime() / 1000 + CLOCK_SKEW_SECONDS) {
    return { code: 'ATTESTATION_INVALID', message: 'The attestation was issued in the future (iat).' };
  }
  return undefined;
}
