import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { KeyObject } from 'node:crypto';
import type { Clock } from '../../core/clock.ts';
import { signCompact, signingKeyFromJwk } from '../../core/crypto/compact-jws.ts';
import { PLAINTEXT_KEYS, type KeySealer } from '../../core/crypto/key-sealer.ts';
import type { PublicJwks, PublishedKey, RegistrySigner, SigningAlg } from '../../core/crypto/signer-types.ts';
import type { Storage } from '../storage/database.ts';
import {
  findActiveSigningKey,
  findSigningKeys,
  insertActiveSigningKeyIfNone,
  listPublishedSigningKeys,
  resealSigningKeys,
  setOpenKeyWindow,
  type SigningKeyRow,
} from './storage/signing-key-store.ts';

export type { PublicJwks, PublishedKey, RegistrySigner, SigningAlg } from '../../core/crypto/signer-types.ts';

/** How stale another instance's rotation may be before this one signs with the new key. */
const RELOAD_EVERY_MS = 5_000;

type Loaded = {
  kid: string;
  alg: SigningAlg;
  privateKey: KeyObject;
  jwks: PublicJwks;
  published: PublishedKey[];
  loadedAt: number;
};

/**
 * Loads the active signing key from storage, creating one on first start (contract §5: ES256 by
 * default, kept in storage). When several instances start together exactly one key wins. Signing
 * re-reads the keys at most every few seconds, so a rotation on any instance reaches all of them.
 */
export async function loadRegistrySigner(
  storage: Storage,
  alg: SigningAlg,
  clock: Clock,
  lifetimeDays: number,
  sealer: KeySealer = PLAINTEXT_KEYS,
): Promise<RegistrySigner> {
  // Keys stored before a KEK was set, or under the previous one, are sealed under the current one now.
  await resealSigningKeys(storage.db, sealer);
  const existing = await findActiveSigningKey(storage.db, sealer);
  if (!existing) {
    await insertActiveSigningKeyIfNone(storage.db, await createSigningKey(alg, clock.now(), lifetimeDays), sealer);
  } else if (existing.not_after === null) {
    await setOpenKeyWindow(storage.db, existing.kid, openKeyEnd(existing.not_before, clock.now(), lifetimeDays));
  }

  async function load(): Promise<Loaded> {
    const active = await findActiveSigningKey(storage.db, sealer);
    if (!active) throw new Error('no active signing key');
    const published = await listPublishedSigningKeys(storage.db, clock.now().toISOString(), sealer);
    return {
      kid: active.kid,
      alg: active.alg as SigningAlg,
      privateKey: signingKeyFromJwk(active.private_jwk as JWK),
      jwks: { keys: published.map(publicJwk) },
      published: published.map(({ kid, alg, not_before, not_after }) => ({ kid, alg, not_before, not_after })),
      loadedAt: Date.now(),
    };
  }

  let current = await load();
  // Loads run one after another; a reload always reads after it was asked for (a rotation that has
  // just committed is seen), while a stale check joins whichever load is under way.
  let loading: Promise<void> = Promise.resolve();
  let inFlight = false;
  const reload = () => {
    inFlight = true;
    loading = loading
      .then(load)
      .then((next) => {
        current = next;
      })
      .finally(() => {
        inFlight = false;
      });
    return loading;
  };

  const refreshIfStale = async () => {
    if (inFlight) await loading;
    else if (Date.now() - current.loadedAt > RELOAD_EVERY_MS) await reload();
  };

  async function signJson(json: string | Buffer, typ = 'JWT'): Promise<string> {
    await refreshIfStale();
    const { alg: keyAlg, kid, privateKey } = current;
    return signCompact(typeof json === 'string' ? Buffer.from(json) : json, { alg: keyAlg, kid, typ }, privateKey);
  }

  return {
    get kid() {
      return current.kid;
    },
    get alg() {
      return current.alg;
    },
    sign: (payload, typ = 'JWT') => signJson(JSON.stringify(payload), typ),
    signJson,
    async signWithKeys(payload, typ, kids) {
      await refreshIfStale();
      const bytes = Buffer.from(JSON.stringify(payload));
      const others = (await findSigningKeys(storage.db, kids.filter((kid) => kid !== current.kid), sealer)).slice(0, 4);
      const keys = [
        { kid: current.kid, alg: current.alg, privateKey: current.privateKey },
        ...others.map((row) => ({ kid: row.kid, alg: row.alg as SigningAlg, privateKey: signingKeyFromJwk(row.private_jwk as JWK) })),
      ];
      return keys.map(({ kid, alg, privateKey }) => signCompact(bytes, { alg, kid, typ }, privateKey));
    },
    jwks: () => current.jwks,
    publishedKeys: () => current.published,
    keySealer: sealer,
    reload,
    refreshIfStale,
  };
}

function publicJwk(row: SigningKeyRow): JWK {
  return { ...(row.public_jwk as JWK), kid: row.kid, alg: row.alg, use: 'sig', not_before: row.not_before, not_after: row.not_after } as JWK;
}

const DAY_MS = 86_400_000;

/** A key made before keys had a window: `not_before` + the lifetime, but never sooner than a week from now (time to renew). */
export function openKeyEnd(notBefore: string, now: Date, lifetimeDays: number): string {
  return new Date(Math.max(Date.parse(notBefore) + lifetimeDays * DAY_MS, now.getTime() + 7 * DAY_MS)).toISOString();
}

/**
 * A new key pair as a storage row; its kid is the RFC 7638 thumbprint of the public key. It is valid
 * for `lifetimeDays` (spec: a trust anchor's `not_after` is a time); renewal rotates it before then.
 */
export async function createSigningKey(alg: SigningAlg, now: Date, lifetimeDays: number): Promise<Omit<SigningKeyRow, 'active'>> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true, ...(alg === 'EdDSA' ? { crv: 'Ed25519' } : {}) });
  const publicJwk = await exportJWK(publicKey);
  const at = now.toISOString();
  return {
    kid: await calculateJwkThumbprint(publicJwk, 'sha256'),
    alg,
    public_jwk: publicJwk as Record<string, unknown>,
    private_jwk: (await exportJWK(privateKey)) as Record<string, unknown>,
    not_before: at,
    not_after: new Date(now.getTime() + lifetimeDays * DAY_MS).toISOString(),
    created_at: at,
  };
}
