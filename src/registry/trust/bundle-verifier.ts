import { isDeepStrictEqual } from 'node:util';
import { compactVerify, createLocalJWKSet, decodeProtectedHeader, type JWK } from 'jose';
import type { TrustBundle } from './trust-bundle.ts';

/** What the verifier trusts: the anchor's public keys, and optionally which registry it is. */
export type TrustAnchorInput = { jwks: { keys: JWK[] }; registry_id?: string };

export type BundleVerificationError = {
  code:
    | 'BUNDLE_MALFORMED'
    | 'BUNDLE_KEY_UNKNOWN'
    | 'BUNDLE_SIGNATURE_INVALID'
    | 'BUNDLE_TAMPERED'
    | 'BUNDLE_EXPIRED'
    | 'BUNDLE_NOT_YET_VALID'
    | 'CHAIN_MISMATCH';
  message: string;
};

export type BundleVerification = { valid: boolean; subject?: string; errors: BundleVerificationError[] };

const ALGORITHMS = ['ES256', 'EdDSA', 'RS256'];
const SKEW_MS = 60_000;

/**
 * Verifies a trust bundle offline against a trust anchor: the bundle's JWS verifies with a key of
 * the anchor (and only the anchor: a `jku`, `x5u` or embedded `jwk` header is never followed), the
 * signed payload is exactly the bundle's other fields, it is inside its validity window, and its
 * chain ends at its issuer and starts at the anchor. Federation adds delegation statements to check.
 */
export async function verifyTrustBundle(bundle: unknown, anchor: TrustAnchorInput, now: Date = new Date()): Promise<BundleVerification> {
  const errors: BundleVerificationError[] = [];
  const fail = (code: BundleVerificationError['code'], message: string) => ({ valid: false, errors: [...errors, { code, message }] });
  if (!isBundleShape(bundle)) return fail('BUNDLE_MALFORMED', 'not a signed trust bundle');
  const { signed_bundle: jws, ...fields } = bundle;

  let header: Record<string, unknown>;
  try {
    header = decodeProtectedHeader(jws) as Record<string, unknown>;
  } catch {
    return fail('BUNDLE_MALFORMED', 'signed_bundle is not a compact JWS');
  }
  if (!anchor.jwks.keys.some((key) => key.kid === header.kid)) return fail('BUNDLE_KEY_UNKNOWN', 'the bundle was not signed by a key of the anchor');
  let payload: unknown;
  try {
    const verified = await compactVerify(jws, createLocalJWKSet(anchor.jwks), { algorithms: ALGORITHMS });
    payload = JSON.parse(new TextDecoder().decode(verified.payload));
  } catch {
    return fail('BUNDLE_SIGNATURE_INVALID', 'the bundle signature does not verify with the anchor');
  }
  if (!isDeepStrictEqual(payload, fields)) errors.push({ code: 'BUNDLE_TAMPERED', message: 'the bundle differs from what was signed' });

  const issued = Date.parse(fields.issued_at);
  const expires = Date.parse(fields.expires_at);
  if (!(expires > now.getTime() - SKEW_MS)) errors.push({ code: 'BUNDLE_EXPIRED', message: 'the bundle has expired' });
  if (!(issued <= now.getTime() + SKEW_MS)) errors.push({ code: 'BUNDLE_NOT_YET_VALID', message: 'the bundle is not yet valid' });

  const chain = fields.delegation_chain;
  if (chain.length === 0 || chain.at(-1) !== fields.issuer) {
    errors.push({ code: 'CHAIN_MISMATCH', message: 'the delegation chain does not end at the issuer' });
  } else if (anchor.registry_id && chain[0] !== anchor.registry_id) {
    errors.push({ code: 'CHAIN_MISMATCH', message: 'the delegation chain does not start at the anchor' });
  } else if (chain.length > 1 && fields.statements.length < chain.length - 1) {
    errors.push({ code: 'CHAIN_MISMATCH', message: 'the chain has links without a delegation statement' });
  }
  return { valid: errors.length === 0, subject: fields.subject, errors };
}

function isBundleShape(value: unknown): value is TrustBundle & { signed_bundle: string } {
  if (typeof value !== 'object' || value === null) return false;
  const b = value as Record<string, unknown>;
  return (
    typeof b.signed_bundle === 'string' &&
    typeof b.subject === 'string' &&
    typeof b.issuer === 'string' &&
    typeof b.issued_at === 'string' &&
    typeof b.expires_at === 'string' &&
    Array.isArray(b.delegation_chain) &&
    Array.isArray(b.statements)
  );
}
