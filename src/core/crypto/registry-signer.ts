import { CompactSign, calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import type { Clock } from '../clock.ts';
import type { Storage } from '../storage/database.ts';
import {
  findActiveSigningKey,
  insertActiveSigningKeyIfNone,
  listPublishedSigningKeys,
  type SigningKeyRow,
} from '../storage/stores/signing-key-store.ts';

export type SigningAlg = 'ES256' | 'EdDSA' | 'RS256';

export type PublicJwks = { keys: JWK[] };

/** The registry's own signing identity: signs metadata, responses and statements as compact JWS. */
export type RegistrySigner = {
  readonly kid: string;
  readonly alg: SigningAlg;
  /** Compact JWS over the JSON of `payload`, header `{alg, kid, typ}`. */
  sign(payload: unknown, typ?: string): Promise<string>;
  /** The public keys clients verify with (RFC 7517 JWKS); never a private member. */
  jwks(): PublicJwks;
  /** The published keys with their validity windows (the trust anchors of this registry). */
  publishedKeys(): ReadonlyArray<{ kid: string; alg: string; not_before: string; not_after: string | null }>;
};

/**
 * Loads the active signing key from storage, creating one on first start (contract §5: ES256 by
 * default, kept in storage). When several instances start together exactly one key wins.
 */
export async function loadRegistrySigner(storage: Storage, alg: SigningAlg, clock: Clock): Promise<RegistrySigner> {
  let active = await findActiveSigningKey(storage.db);
  if (!active) {
    await insertActiveSigningKeyIfNone(storage.db, await createKey(alg, clock));
    active = await findActiveSigningKey(storage.db);
    if (!active) throw new Error('no active signing key after creating one');
  }
  const published = await listPublishedSigningKeys(storage.db, clock.now().toISOString());
  const privateKey = await importJWK(active.private_jwk as JWK, active.alg);
  const keyAlg = active.alg as SigningAlg;
  const kid = active.kid;
  const jwks: PublicJwks = { keys: published.map(publicJwk) };
  return {
    kid,
    alg: keyAlg,
    sign: (payload, typ = 'JWT') =>
      new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
        .setProtectedHeader({ alg: keyAlg, kid, typ })
        .sign(privateKey),
    jwks: () => jwks,
    publishedKeys: () => published.map(({ kid, alg, not_before, not_after }) => ({ kid, alg, not_before, not_after })),
  };
}

function publicJwk(row: SigningKeyRow): JWK {
  return { ...(row.public_jwk as JWK), kid: row.kid, alg: row.alg, use: 'sig' };
}

async function createKey(alg: SigningAlg, clock: Clock): Promise<Omit<SigningKeyRow, 'active'>> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true, ...(alg === 'EdDSA' ? { crv: 'Ed25519' } : {}) });
  const publicJwk = await exportJWK(publicKey);
  const now = clock.now().toISOString();
  return {
    kid: await calculateJwkThumbprint(publicJwk, 'sha256'),
    alg,
    public_jwk: publicJwk as Record<string, unknown>,
    private_jwk: (await exportJWK(privateKey)) as Record<string, unknown>,
    not_before: now,
    not_after: null,
    created_at: now,
  };
}
