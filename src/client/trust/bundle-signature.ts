import { isDeepStrictEqual } from 'node:util';
import { SKEW_MS, offeredKeyMembers, verifyWithKeySet, type KeySetVerification, type PublishedJwk } from '../../core/crypto/key-set.ts';
import { BUNDLE_TYP, type TrustBundle } from '../../contract/trust-bundle.ts';
import type { ChainVerificationCode, ChainVerificationError } from './chain-errors.ts';

const BUNDLE_KEY_CODES: Readonly<Record<Extract<KeySetVerification, { ok: false }>['problem'], ChainVerificationCode>> = {
  'key-unknown': 'BUNDLE_KEY_UNKNOWN',
  'key-expired': 'KEY_EXPIRED',
  'key-not-yet-valid': 'KEY_NOT_YET_VALID',
  'signature-invalid': 'BUNDLE_SIGNATURE_INVALID',
  'payload-not-json': 'BUNDLE_MALFORMED',
};

/**
 * The problems of a bundle's own JWS, checked with the issuer's keys as the chain above it proved them:
 * its header offers no key and is typed {@link BUNDLE_TYP}, it verifies, it equals the bundle's other
 * fields, and the bundle is inside `issued_at`..`expires_at` (60 s of skew).
 */
export async function bundleSignatureErrors(
  jws: string,
  header: Record<string, unknown>,
  fields: TrustBundle,
  issuerKeys: readonly PublishedJwk[],
  now: Date,
): Promise<ChainVerificationError[]> {
  const errors: ChainVerificationError[] = [];
  const offered = offeredKeyMembers(header);
  if (offered.length > 0) errors.push({ code: 'KEY_URL_REFUSED', message: `bundle: the header offers a key (${offered.join(', ')}); keys come only from the chain` });
  if (header.typ !== BUNDLE_TYP) errors.push({ code: 'BUNDLE_MALFORMED', message: `bundle: typ is ${String(header.typ)}, not ${BUNDLE_TYP}` });
  const verified = await verifyWithKeySet(jws, header, issuerKeys, now);
  if (!verified.ok) return [...errors, { code: BUNDLE_KEY_CODES[verified.problem], message: `bundle: ${verified.message} (the issuer's keys)` }];
  if (!isDeepStrictEqual(verified.payload, fields)) errors.push({ code: 'BUNDLE_TAMPERED', message: 'the bundle differs from what was signed' });

  const issued = Date.parse(fields.issued_at);
  const expires = Date.parse(fields.expires_at);
  if (!(expires > now.getTime() - SKEW_MS)) errors.push({ code: 'BUNDLE_EXPIRED', message: 'the bundle has expired' });
  if (!(issued <= now.getTime() + SKEW_MS)) errors.push({ code: 'BUNDLE_NOT_YET_VALID', message: 'the bundle is not yet valid' });
  return errors;
}

