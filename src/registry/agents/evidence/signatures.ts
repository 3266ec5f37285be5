// Record signatures: compact JWS verified only with keys the record or the owner's registry publishes.
// Header-supplied keys (jku, x5u, jwk, x5c) would let anyone sign for anyone, so they never count.
import type { KeyObject } from 'node:crypto';
import { certificateDer, type ParsedCertificate } from './certificates.ts';
import { keyFitsAlg, selectJwkKeys } from './jwks.ts';
import { claimsProblem, headerOffersKey, parseJwsElement, verifyWithAnyKey, type ClaimsWording } from './jws.ts';
import {
  verifySection,
  type AllowedJwsAlg,
  type ElementProblem,
  type TrustBinding,
  type TrustValidationError,
  type TrustedKey,
} from './trust-types.ts';

const SIGNATURE_CLAIMS: ClaimsWording = { noun: 'signature', participle: 'signed', mismatch: 'SIGNATURE_BINDING_MISMATCH', outsideWindow: 'SIGNATURE_EXPIRED' };

/** Keys a record signature may be verified with. */
export type SignatureKeySources = {
  certificates: readonly ParsedCertificate[];
  /** The record's own jwks keys that passed checking. */
  recordKeys: readonly TrustedKey[];
  /** Keys the owner's registry publishes. */
  registryKeys: readonly TrustedKey[];
};

type Candidates = { keys: KeyObject[] } | { malformed: string };

function selectCandidates(
  header: Record<string, unknown>,
  alg: AllowedJwsAlg,
  sources: SignatureKeySources,
): Candidates {
  const kid = header['kid'];
  const thumbprint = header['x5t#S256'];
  const x5c = header['x5c'];
  if (kid !== undefined && typeof kid !== 'string') return { malformed: 'The JWS "kid" must be a string.' };
  if (thumbprint !== undefined && typeof thumbprint !== 'string') {
    return { malformed: 'The JWS "x5t#S256" must be a string.' };
  }
  let certs = sources.certificates;
  if (x5c !== undefined) {
    if (!Array.isArray(x5c) || typeof x5c[0] !== 'string') {
      return { malformed: 'The JWS "x5c" must be an array of base64 certificates.' };
    }
    // A header certificate is only a pointer: it must be one the record itself carries.
    const first = certificateDer(x5c[0]);
    certs = first === undefined ? [] : certs.filter((cert) => cert.der.equals(first));
  }
  if (thumbprint !== undefined) certs = certs.filter((cert) => cert.thumbprint === thumbprint);
  const certKeys = certs
    .map((cert) => cert.key)
    .filter((key): key is KeyObject => key !== undefined && keyFitsAlg(key, alg));
  return {
    keys: [
      ...certKeys,
      ...selectJwkKeys(sources.recordKeys, alg, kid),
      ...selectJwkKeys(sources.registryKeys, alg, kid),
    ],
  };
}

/**
 * Validates `trust.signatures`: allowed alg, a key from `sources`, a valid signature, a JSON payload
 * that agrees with the record on any binding claim it carries, and `exp`/`nbf` with 60 s skew.
 * Returns one error per bad element and how many verified.
 */
export async function checkSignatures(
  signatures: unknown,
  sources: SignatureKeySources,
  binding: TrustBinding,
  now: Date,
): Promise<{ errors: TrustValidationError[]; verifiedCount: number }> {
  const errors: TrustValidationError[] = [];
  const verifiedCount = await verifySection(signatures, 'signatures', 'SIGNATURE_MALFORMED', errors, (element) =>
    checkOne(element, sources, binding, now),
  );
  return { errors, verifiedCount };
}

async function checkOne(
  element: unknown,
  sources: SignatureKeySources,
  binding: TrustBinding,
  now: Date,
): Promise<ElementProblem | undefined> {
  const parsed = parseJwsElement(element, 'A signature', { malformed: 'SIGNATURE_MALFORMED', alg: 'SIGNATURE_ALG_FORBIDDEN' });
  if ('problem' in parsed) return parsed.problem;
  const { jws } = parsed;
  const candidates = selectCandidates(jws.header, jws.alg, sources);
  if ('malformed' in candidates) return { code: 'SIGNATURE_MALFORMED', message: candidates.malformed };
  if (candidates.keys.length === 0) {
    return {
      code: 'SIGNATURE_KEY_UNKNOWN',
      message: headerOffersKey(jws.header)
        ? 'The only key on offer comes from the JWS header (jku, x5u, jwk or x5c), which is never trusted; ' +
          "publish the key in the record's certificates or jwks."
        : "No key in the record's certificates or jwks, or the owner's registry, fits this signature.",
    };
  }
  if (!(await verifyWithAnyKey(jws, candidates.keys))) {
    return { code: 'SIGNATURE_INVALID', message: 'The signature does not verify with any eligible key.' };
  }
  return claimsProblem(jws.payload, binding, now, SIGNATURE_CLAIMS);
}
