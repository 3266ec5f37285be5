/**
 * What a registry below the root last learnt from its superior through OpenID Federation, kept per
 * instance (each instance learns it itself: every instance builds its own chain, ./own-trust-chain.ts):
 *
 * - the kids the superior's subordinate statement names for this registry. Until it names the key this
 *   registry now signs with, the entity configuration is signed with a key it does name (OIDF's key
 *   rollover: the superior reads the configuration and takes the new keys from it,
 *   ./subordinate-rollover.ts), and only then with the current key;
 * - the superior's keys as the last chain that validated states them, with which a signed refusal is
 *   checked (never with keys from the same answer: ./superior-revocation.ts);
 * - the last mark of each registry type the superior issued about this registry, kept after the
 *   superior stops issuing it, so its status can still be asked (./parent-trust-marks.ts).
 */
import { decodeProtectedHeader } from 'jose';
import type { PublishedJwk } from '../../core/crypto/key-set.ts';
import type { RegistrySigner } from '../trust/registry-signer.ts';

export type SuperiorView = {
  /** The kids the superior's last verified statement about this registry names; undefined until one was read. */
  namedKids: readonly string[] | undefined;
  /** The superior's entity identifier and keys from the last chain that validated. */
  superior: { entityId: string; keys: PublishedJwk[] } | undefined;
  /** The last trust mark the superior issued about this registry, by type (registry marks only). */
  readonly marks: Map<string, string>;
};

export function createSuperiorView(): SuperiorView {
  return { namedKids: undefined, superior: undefined, marks: new Map() };
}

/** A key signing the configuration should outlive it by this much at least. */
const KEY_MARGIN_MS = 60_000;

/**
 * The kid to sign the entity configuration with: the current key once the superior names it (or while
 * nothing is known of what it names), else a key the superior names that this registry still publishes
 * inside its window; the current key when there is none (an emergency rotation retired the old key).
 */
export function configurationKid(signer: Pick<RegistrySigner, 'kid' | 'publishedKeys'>, named: readonly string[] | undefined, now: Date): string {
  if (named === undefined || named.includes(signer.kid)) return signer.kid;
  const nowMs = now.getTime();
  const usable = signer
    .publishedKeys()
    .find((key) => named.includes(key.kid) && Date.parse(key.not_before) <= nowMs && (key.not_after === null || Date.parse(key.not_after) > nowMs + KEY_MARGIN_MS));
  return usable?.kid ?? signer.kid;
}

/** `claims` signed by `kid` (one of this registry's keys), or by the current key when that is the one. */
export async function signWithKid(signer: Pick<RegistrySigner, 'kid' | 'sign' | 'signWithKeys'>, claims: unknown, typ: string, kid: string): Promise<string> {
  if (kid === signer.kid) return signer.sign(claims, typ);
  const signed = await signer.signWithKeys(claims, typ, [kid]);
  return signed.find((jws) => decodeProtectedHeader(jws).kid === kid) ?? (signed[0] as string);
}
