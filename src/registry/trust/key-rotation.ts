import type { CallContext } from '../../core/call-context.ts';
import { createSigningKey, type SigningAlg } from '../../core/crypto/registry-signer.ts';
import { rotateSigningKey } from '../../core/storage/stores/signing-key-store.ts';
import type { WriteUnit } from '../../core/storage/write-unit.ts';

export type RotatedKey = {
  key_id: string;
  alg: SigningAlg;
  not_before: string;
  previous: { key_id: string; alg: SigningAlg; not_after: string } | null;
};

/**
 * Key rotation (contract §5, docs/federation.md): a new key signs from now on; the old public key
 * stays published, and keeps verifying what it signed, until `now + retireAfterSeconds`. The change
 * and its `trust.key_rotated` event commit together; callers reload the signer afterwards.
 */
export async function rotateRegistryKey(
  unit: WriteUnit,
  ctx: CallContext,
  options: { registryId: string; alg: SigningAlg; retireAfterSeconds: number },
): Promise<RotatedKey> {
  const now = ctx.clock.now();
  const next = await createSigningKey(options.alg, now);
  const retireAt = new Date(now.getTime() + options.retireAfterSeconds * 1000).toISOString();
  const previous = await rotateSigningKey(unit.tx, next, retireAt);
  const result: RotatedKey = {
    key_id: next.kid,
    alg: options.alg,
    not_before: next.not_before,
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
