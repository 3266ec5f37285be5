/**
 * A child registry's keys at registration (docs/federation.md): each trust anchor names a key by its
 * RFC 7638 thumbprint, found in the body's `jwks` or at the anchor's `jwks_uri` (fetched through the
 * registry's guarded fetch, through the federation client: no private addresses in production).
 */
import { calculateJwkThumbprint, type JWK } from 'jose';
import { WardError } from '../../core/errors.ts';
import { failureKind, fetchKeySet } from '../../client/federation-client.ts';
import type { AnchorRole, ChildTier, RegisterRegistryInput, TrustAnchorInput } from './child-registry-types.ts';
import { hasPrivateKeyMaterial } from '../../core/crypto/key-set.ts';

const ROLE_OF: Record<ChildTier, AnchorRole> = { sovereign: 'sovereign_registry', organisational: 'organisation' };
const MAX_JWKS_BYTES = 64 * 1024;

/** The child's public keys, each pinned by an anchor's thumbprint; from the body or the anchors' jwks_uri. */
export async function resolveChildKeys(
  input: RegisterRegistryInput,
  now: Date,
  options: { timeoutMs: number; fetch: typeof fetch },
): Promise<{ anchors: Required<TrustAnchorInput>[]; jwks: { keys: Record<string, unknown>[] } }> {
  const candidates = new Map<string, Record<string, unknown>[]>();
  // One deadline for every fetch of this registration, however many anchors it names.
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const errors: Array<{ in: string; pointer: string; reason: string }> = [];
  const keysAt = async (uri: string) => {
    if (input.jwks) return input.jwks.keys;
    let keys = candidates.get(uri);
    if (!keys) {
      keys = await fetchJwks(uri, deadline, options);
      candidates.set(uri, keys);
    }
    return keys;
  };
  const anchors: Required<TrustAnchorInput>[] = [];
  const keys: Record<string, unknown>[] = [];
  for (const [index, anchor] of input.trust_anchors.entries()) {
    const pointer = `/trust_anchors/${index}`;
    let match: Record<string, unknown> | undefined;
    for (const key of await keysAt(anchor.jwks_uri)) {
      if (hasPrivateKeyMaterial(key)) {
        errors.push({ in: 'body', pointer: input.jwks ? '/jwks' : `${pointer}/jwks_uri`, reason: 'keys must be public keys' });
        break;
      }
      const thumbprint = await calculateJwkThumbprint(key as JWK, 'sha256').catch(() => undefined);
      if (thumbprint === anchor.thumbprint_sha256) match = key;
    }
    if (!match) {
      errors.push({ in: 'body', pointer: `${pointer}/thumbprint_sha256`, reason: 'no public key with this RFC 7638 SHA-256 thumbprint' });
      continue;
    }
    if (typeof match.alg === 'string' && match.alg !== anchor.alg) errors.push({ in: 'body', pointer: `${pointer}/alg`, reason: "does not match the key's alg" });
    // The child signs with its key's own kid: a different key_id would never match its signatures.
    if (typeof match.kid === 'string' && match.kid !== anchor.key_id) errors.push({ in: 'body', pointer: `${pointer}/key_id`, reason: "does not match the key's kid" });
    const notBefore = anchor.not_before ? new Date(anchor.not_before).toISOString() : now.toISOString();
    const notAfter = anchor.not_after ? new Date(anchor.not_after).toISOString() : null;
    if (notAfter !== null && notAfter <= notBefore) errors.push({ in: 'body', pointer: `${pointer}/not_after`, reason: 'must be after not_before' });
    const { kty, crv, x, y, n, e } = match;
    keys.push(strip({ kty, crv, x, y, n, e, kid: anchor.key_id, alg: anchor.alg, use: 'sig', not_before: notBefore, not_after: notAfter }));
    anchors.push({ ...anchor, role: anchor.role ?? ROLE_OF[input.tier], not_before: notBefore, not_after: notAfter });
  }
  if (errors.length > 0) throw new WardError('VALIDATION_ERROR', 'The request failed validation.', { errors });
  return { anchors, jwks: { keys } };
}

/** A JWKS at `uri` (through the federation client), capped in size; its answer is never echoed back. */
async function fetchJwks(uri: string, signal: AbortSignal, options: { timeoutMs: number; fetch: typeof fetch }): Promise<Record<string, unknown>[]> {
  const invalid = () => new WardError('VALIDATION_ERROR', 'The request failed validation.', { errors: [{ in: 'body', pointer: '/trust_anchors', reason: `${uri} did not answer a JWKS` }] });
  const answer = await fetchKeySet(uri, { fetch: options.fetch, timeoutMs: options.timeoutMs, maxBytes: MAX_JWKS_BYTES, signal });
  const { status } = answer;
  const success = status !== null && status >= 200 && status < 300;
  if (!answer.ok) {
    const kind = failureKind(answer);
    if (kind === 'private_address') {
      throw new WardError('VALIDATION_ERROR', 'The request failed validation.', {
        errors: [{ in: 'body', pointer: '/trust_anchors', reason: `${uri}: private, loopback and link-local addresses are refused in production (REGISTRY_ALLOW_PRIVATE_ENDPOINTS)` }],
      });
    }
    // A success status whose body is too large or not JSON is not a JWKS; anything else did not answer.
    if (!(success && (kind === 'too_large' || kind === 'answer'))) {
      // The reason stays generic: the answer of an arbitrary URL is not echoed back.
      throw new WardError('DEPENDENCY_UNAVAILABLE', "The child's JWKS could not be fetched.", { url: uri });
    }
    throw invalid();
  }
  const keys = (answer.body as { keys?: unknown } | null | undefined)?.keys;
  if (!Array.isArray(keys)) throw invalid();
  return keys.filter((key): key is Record<string, unknown> => typeof key === 'object' && key !== null);
}

function strip(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
}
