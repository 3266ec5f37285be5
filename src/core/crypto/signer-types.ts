/**
 * The registry's signing identity as its users see it: what signs metadata, answers and statements,
 * and the keys it publishes. The implementation, which keeps the keys in the registry's storage, is
 * src/registry/signing-keys/registry-signer.ts; the contract's statement and bundle formats sign through
 * this type alone.
 */
import type { JWK } from 'jose';
import type { KeySealer } from './key-sealer.ts';

export type SigningAlg = 'ES256' | 'EdDSA' | 'RS256';

export type PublicJwks = { keys: JWK[] };

export type PublishedKey = { kid: string; alg: string; not_before: string; not_after: string | null };

/** The registry's own signing identity: signs metadata, responses and statements as compact JWS. */
export type RegistrySigner = {
  /** The key signing now (changes on rotation). */
  readonly kid: string;
  readonly alg: SigningAlg;
  /** Compact JWS over the JSON of `payload`, header `{alg, kid, typ}`. */
  sign(payload: unknown, typ?: string): Promise<string>;
  /** The same over JSON already serialised, as text or UTF-8 bytes (a large answer is then serialised once, not twice). */
  signJson(json: string | Buffer, typ?: string): Promise<string>;
  /**
   * The public keys clients verify with (RFC 7517 JWKS); never a private member. Each key carries
   * `not_before` / `not_after` (docs/federation.md): a retired key verifies only until its not_after.
   */
  jwks(): PublicJwks;
  /** The published keys with their validity windows (the trust anchors of this registry). */
  publishedKeys(): readonly PublishedKey[];
  /**
   * One compact JWS by the current key and one by each of `kids` this registry holds, retired or
   * expired ones included: proof to a party that knows only an older key (a parent learning of a
   * rotation) that the new keys come from the same holder.
   */
  signWithKeys(payload: unknown, typ: string, kids: readonly string[]): Promise<string[]>;
  /** How private keys are stored (sealed under a KEK, or plain); rotations write with it too. */
  readonly keySealer: KeySealer;
  /** Reads the keys again (after a rotation here or on another instance). */
  reload(): Promise<void>;
  /** Reloads when the keys were read more than a few seconds ago (before publishing them). */
  refreshIfStale(): Promise<void>;
};

