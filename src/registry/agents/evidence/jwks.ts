// JWK handling: strict checking of the record's own jwks, lenient import of keys the caller trusts
// (owner registry, attestation issuers), and the key/alg compatibility rule used for key selection.
import { createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import {
  TRUST_LIMITS,
  elementsToCheck,
  isJsonObject,
  type AllowedJwsAlg,
  type JwkObject,
  type TrustValidationError,
  type TrustedKey,
} from './trust-types.ts';

// RFC 7518 §6.2.2, §6.3.2 and §6.4: members that only private or symmetric keys carry.
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;

// RSA below 2048 bits is refused by jose anyway. Verification cost grows with modulus and exponent
// size; at 8192 bits with a 32-bit exponent, 16 failing signatures tried against every eligible key
// took about a second, so larger keys are refused to keep validation inside its one-second budget.
const RSA_MIN_BITS = 2048;
const RSA_MAX_BITS = 4096;
const RSA_MAX_EXPONENT = 2n ** 32n;

/** Why a JWK cannot be used. */
type JwkProblem = { code: 'JWKS_PRIVATE_KEY' | 'JWKS_INVALID_KEY'; message: string };

function importJwk(jwk: unknown): { key: TrustedKey } | { problem: JwkProblem } {
  if (!isJsonObject(jwk)) {
    return { problem: { code: 'JWKS_INVALID_KEY', message: 'A JWK must be a JSON object.' } };
  }
  if (PRIVATE_MEMBERS.some((member) => member in jwk)) {
    return {
      problem: {
        code: 'JWKS_PRIVATE_KEY',
        message: 'The key carries private or symmetric key material; publish only public keys.',
      },
    };
  }
  const text = JSON.stringify(jwk);
  if (text.length > TRUST_LIMITS.elementBytes) {
    return { problem: { code: 'JWKS_INVALID_KEY', message: 'The key is larger than 16 KiB.' } };
  }
  for (const member of ['kid', 'alg', 'use'] as const) {
    if (jwk[member] !== undefined && typeof jwk[member] !== 'string') {
      return { problem: { code: 'JWKS_INVALID_KEY', message: `The key's "${member}" must be a string.` } };
    }
  }
  const keyOps = jwk['key_ops'];
  if (keyOps !== undefined && !(Array.isArray(keyOps) && keyOps.every((op) => typeof op === 'string'))) {
    return {
      problem: { code: 'JWKS_INVALID_KEY', message: `The key's "key_ops" must be an array of strings.` },
    };
  }
  let key: KeyObject;
  try {
    key = publicKeyOf(text, jwk);
  } catch {
    return { problem: { code: 'JWKS_INVALID_KEY', message: 'The key does not import as a public key.' } };
  }
  if (key.asymmetricKeyType === 'rsa' || key.asymmetricKeyType === 'rsa-pss') {
    if (!rsaSizeAcceptable(key)) {
      return {
        problem: {
          code: 'JWKS_INVALID_KEY',
          message: `RSA keys must have a modulus of ${RSA_MIN_BITS}–${RSA_MAX_BITS} bits and a public exponent below 2^32.`,
        },
      };
    }
  }
  const use = jwk['use'];
  const forSignatures =
    (use === undefined || use === 'sig') && (keyOps === undefined || (keyOps as string[]).includes('verify'));
  const trusted: TrustedKey = { key, forSignatures };
  if (typeof jwk['kid'] === 'string') trusted.kid = jwk['kid'];
  if (typeof jwk['alg'] === 'string') trusted.alg = jwk['alg'];
  return { key: trusted };
}

/**
 * Imported public keys by their JWK text. Importing is a large share of validating a record (every
 * write checks against the registry's own keys and the issuers'), and the same keys recur; a
 * KeyObject is immutable, so sharing one is safe. Bounded, oldest first out.
 */
const importedKeys = new Map<string, KeyObject>();
const IMPORTED_KEYS_MAX = 2000;

function publicKeyOf(text: string, jwk: JwkObject): KeyObject {
  let key = importedKeys.get(text);
  if (!key) {
    key = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
    if (importedKeys.size >= IMPORTED_KEYS_MAX) importedKeys.delete(importedKeys.keys().next().value as string);
    importedKeys.set(text, key);
  }
  return key;
}

function rsaSizeAcceptable(key: KeyObject): boolean {
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  const exponent = key.asymmetricKeyDetails?.publicExponent ?? 0n;
  return bits >= RSA_MIN_BITS && bits <= RSA_MAX_BITS && exponent < RSA_MAX_EXPONENT;
}

/**
 * Checks the record's own `jwks`: every key must import as a public key and none may carry private
 * members. Returns one error per bad key and the keys that passed, for signature verification.
 */
export function checkRecordJwks(jwks: unknown): { errors: TrustValidationError[]; keys: TrustedKey[] } {
  const errors: TrustValidationError[] = [];
  const keys: TrustedKey[] = [];
  if (jwks === undefined) return { errors, keys };
  if (!isJsonObject(jwks) || !Array.isArray(jwks['keys'])) {
    errors.push({
      code: 'JWKS_INVALID_KEY',
      pointer: '/trust/jwks',
      message: 'jwks must be an object with a "keys" array.',
    });
    return { errors, keys };
  }
  const bound = { code: 'JWKS_INVALID_KEY', pointer: '/trust/jwks/keys', noun: 'keys', limit: TRUST_LIMITS.jwksKeys } as const;
  elementsToCheck(jwks['keys'], bound, errors).forEach((jwk, index) => {
    const outcome = importJwk(jwk);
    if ('problem' in outcome) {
      errors.push({ ...outcome.problem, pointer: `/trust/jwks/keys/${index}` });
    } else {
      keys.push(outcome.key);
    }
  });
  return { errors, keys };
}

/**
 * Imports keys published by a party the caller already trusts (the owner's registry, an attestation
 * issuer). Unusable keys are skipped rather than reported: they are not the record's fault.
 */
export function importTrustedJwks(jwks: { keys: readonly JwkObject[] } | undefined): TrustedKey[] {
  if (jwks === undefined || !Array.isArray(jwks.keys)) return [];
  const keys: TrustedKey[] = [];
  for (const jwk of jwks.keys) {
    const outcome = importJwk(jwk);
    if ('key' in outcome) keys.push(outcome.key);
  }
  return keys;
}

/** True when `key` is a public key of the type and size that `alg` requires. */
export function keyFitsAlg(key: KeyObject, alg: AllowedJwsAlg): boolean {
  if (key.type !== 'public') return false;
  const type = key.asymmetricKeyType;
  const curve = key.asymmetricKeyDetails?.namedCurve;
  switch (alg) {
    case 'RS256':
      return type === 'rsa' && rsaSizeAcceptable(key);
    case 'PS256':
      return (type === 'rsa' || type === 'rsa-pss') && rsaSizeAcceptable(key);
    case 'ES256':
      return type === 'ec' && curve === 'prime256v1';
    case 'ES384':
      return type === 'ec' && curve === 'secp384r1';
    case 'EdDSA':
      return type === 'ed25519';
  }
}

/**
 * JWK keys that may verify a JWS with this `alg` and `kid`: selected by `kid` when the header names
 * one, otherwise every key of a fitting type; a JWK that pins another `alg` or is not for signatures is skipped.
 */
export function selectJwkKeys(
  keys: readonly TrustedKey[],
  alg: AllowedJwsAlg,
  kid: string | undefined,
): KeyObject[] {
  return keys
    .filter(
      (candidate) =>
        candidate.forSignatures &&
        (kid === undefined || candidate.kid === kid) &&
        (candidate.alg === undefined || candidate.alg === alg) &&
        keyFitsAlg(candidate.key, alg),
    )
    .map((candidate) => candidate.key);
}
