import type { CallContext } from '../../core/call-context.ts';
import type { KeySealer } from '../../core/crypto/key-sealer.ts';
import { createSigningKey, type SigningAlg } from './registry-signer.ts';
import { rotateSigningKey } from './storage/signing-key-store.ts';
import type { WriteUnit } from '../storage/write-unit.ts';

export type RotatedKey = {
  key_id: string;
  alg: SigningAlg;
  not_before: string;
  not_after: string;
  previous: { key_id: string; alg: SigningAlg; not_after: string } | null;
};

/**
 * Key rotation (contract §5, docs/federation.md): a new key signs from now on; the old public key
 * stays published, and keeps verifying what it signed, until `now + retireAfterSeconds` (or its own
 * `not_after`, if sooner). The change and its `trust.key_rotated` event commit together; callers
 * reload the signer afterwards. With `expectedKid` nothing happens (undefined) unless that key is
 * still the active one: renewal on several instances rotates once.
 */
export type RotationOptions = { registryId: string; alg: SigningAlg; retireAfterSeconds: number; lifetimeDays: number; sealer: KeySealer };

export async function rotateRegistryKey(unit: WriteUnit, ctx: CallContext, options: RotationOptions): Promise<RotatedKey>;
export async function rotateRegistryKey(unit: WriteUnit, ctx: CallContext, options: RotationOptions & { expectedKid: string }): Promise<RotatedKey | undefined>;
export async function rotateRegistryKey(
  unit: WriteUnit,
  ctx: CallContext,
  options: RotationOptions & { expectedKid?: string },
): Promise<RotatedKey | undefined> {
  const now = ctx.clock.now();
  const next = await createSigningKey(options.alg, now, options.lifetimeDays);
  const requestedRetirement = new Date(now.getTime() + options.retireAfterSeconds * 1000).toISOString();
  const rotated = await rotateSigningKey(unit.tx, next, requestedRetirement, { expectedKid: options.expectedKid, sealer: options.sealer });
  if (!rotated) return undefined;
  const { previous, retiredAt: retireAt } = rotated;
  const result: RotatedKey = {
    key_id: next.kid,
    alg: options.alg,
    not_before: next.not_before,
    not_after: next.not_after as string,
    previous: previous ? { key_id: previous.kid, alg: previous.alg as SigningAlg, not_after: retireAt } : null,
  };
  unit.emit({
    type: 'trust.key_rotated',
    subject: options.registryId,
    occurred_at: next.not_before,
    data: { registry_id: options.registryId, key_id: result.key_id, alg: result.alg, previous_key_id: result.previous?.key_id ?? null, previous_not_after: retireAt },
  });
  return result;
}
