/**
 * `DID_VERIFY=true`: the sender signs the exact request body with a key from its DID document and
 * sends a detached compact JWS (RFC 7515 Appendix F: `<protected>..<signature>`) in
 * `X-Mesh-Signature`. The protected header's `kid` is a DID URL of the sender (`<sub>#<key>`); the key
 * must be listed under `authentication` or `assertionMethod`. Failures are -32001 like every other
 * authentication failure.
 */
import { CompactSign, base64url, compactVerify, errors, importJWK, type CryptoKey, type JWK, type KeyObject } from 'jose';
import { MeshRpcError } from '../mesh-errors.ts';
import type { DidDocument, DidResolver, VerificationMethod } from './did-web.ts';

export const SIGNATURE_HEADER = 'x-mesh-signature';

/** Asymmetric algorithms only: a DID document publishes public keys. */
const SIGNATURE_ALGORITHMS = ['ES256', 'ES384', 'EdDSA', 'Ed25519', 'RS256', 'PS256'];

export type BodySignatureFailure =
  | 'missing_body_signature'
  | 'malformed_body_signature'
  | 'signer_mismatch'
  | 'did_unresolvable'
  | 'key_not_found'
  | 'bad_body_signature';

function fail(reason: BodySignatureFailure): never {
  throw new MeshRpcError('UNAUTHORIZED', undefined, { reason });
}

const referenceId = (entry: string | VerificationMethod): string => (typeof entry === 'string' ? entry : entry.id);

/** Absolute id of a verification method (`#key-1` is relative to the document). */
const absolute = (document: DidDocument, id: string): string => (id.startsWith('#') ? `${document.id}${id}` : id);

/** The public JWK the document authorises under `kid`, if any. */
export function findSigningKey(document: DidDocument, kid: string): Record<string, unknown> | undefined {
  const authorised = new Set(
    [...(document.authentication ?? []), ...(document.assertionMethod ?? [])].map((entry) => absolute(document, referenceId(entry))),
  );
  if (!authorised.has(kid)) return undefined;
  const embedded = [...(document.authentication ?? []), ...(document.assertionMethod ?? [])].filter(
    (entry): entry is VerificationMethod => typeof entry !== 'string',
  );
  const method = [...(document.verificationMethod ?? []), ...embedded].find((entry) => absolute(document, entry.id) === kid);
  return method?.publicKeyJwk;
}

/**
 * Verifies `signature` (detached compact JWS) over `body` as made by `sender`. Resolves the sender's
 * DID document with `resolve`; throws -32001 with a reason on any failure.
 */
export async function verifyBodySignature(
  body: Uint8Array,
  signature: string | undefined,
  sender: string,
  resolve: DidResolver,
): Promise<void> {
  if (!signature) fail('missing_body_signature');
  const parts = signature.split('.');
  if (parts.length !== 3 || parts[1] !== '' || !parts[0] || !parts[2]) fail('malformed_body_signature');
  // jose parses the protected header and checks the signature; the key is chosen here, from the
  // sender's DID document, once the header is known. A failure of ours propagates as it is thrown.
  const chooseKey = async (header: { alg?: string; kid?: string; b64?: boolean }) => {
    if (header.b64 === false || typeof header.alg !== 'string' || !SIGNATURE_ALGORITHMS.includes(header.alg)) fail('malformed_body_signature');
    const kid = typeof header.kid === 'string' ? header.kid : '';
    if (!kid.startsWith(`${sender}#`)) fail('signer_mismatch');
    let document: DidDocument;
    try {
      document = await resolve(sender);
    } catch {
      fail('did_unresolvable');
    }
    const jwk = findSigningKey(document, kid);
    if (!jwk) fail('key_not_found');
    try {
      return await importJWK(jwk as JWK, header.alg);
    } catch {
      fail('bad_body_signature');
    }
  };
  try {
    await compactVerify(`${parts[0]}.${base64url.encode(body)}.${parts[2]}`, chooseKey, { algorithms: SIGNATURE_ALGORITHMS });
  } catch (error) {
    if (error instanceof MeshRpcError) throw error;
    fail(error instanceof errors.JWSSignatureVerificationFailed ? 'bad_body_signature' : 'malformed_body_signature');
  }
}

/** Signs a body for `X-Mesh-Signature` (detached). `kid` is the sender's DID URL. */
export async function signBody(
  body: Uint8Array,
  key: CryptoKey | KeyObject | Uint8Array,
  options: { alg: string; kid: string },
): Promise<string> {
  const jws = await new CompactSign(body).setProtectedHeader({ alg: options.alg, kid: options.kid }).sign(key);
  const [protectedHeader, , signature] = jws.split('.');
  return `${protectedHeader}..${signature}`;
}
