/**
 * A child's key rollover (docs/federation.md): the child's keys change only when a configuration it
 * signed with a key the parent already holds for it offers new ones, newer than the last one
 * accepted. Two carriers share these rules: the `Ward-Entity-Configuration` header on a grant fetch
 * (./child-grants.ts, phase 2 of the migration) and the child's OpenID Federation entity
 * configuration, read when its subordinate statement is fetched (../oidf/subordinate-rollover.ts).
 */
import { WardError } from '../../core/errors.ts';
import type { RegistryRow } from './storage/registry-store.ts';
import { findRegistry, updateRegistry } from './storage/registry-store.ts';
import { runWrite } from '../storage/write-unit.ts';
import type { Storage } from '../storage/database.ts';
import { hasPrivateKeyMaterial, verifiedPayload, type PublishedJwk } from '../../core/crypto/key-set.ts';
import { ENTITY_CONFIGURATION_TYP } from './child-registry-types.ts';
import { unreadableWindowMember } from '../../contract/delegation-statement.ts';

/** New keys for a child, and when (ms since the epoch) the configuration offering them was issued. */
export type KeyUpdate = { keys: Record<string, unknown>[]; iat: number };

/** Which carrier brought the keys (the `source` of the `trust.key_rotated` event). */
export type RolloverSource = 'entity_configuration' | 'openid_federation';

/**
 * The keys and iat of a `Ward-Entity-Configuration` header JWS, if a key we hold for the child signed it
 * and it is newer than the last one accepted (an older or replayed one could roll the keys back); else undefined.
 */
export async function rolledOverKeys(row: RegistryRow, jws: string, now: Date): Promise<KeyUpdate | undefined> {
  const payload = await verifiedPayload(jws, ENTITY_CONFIGURATION_TYP, row.jwks.keys as PublishedJwk[], now);
  if (typeof payload !== 'object' || payload === null) return undefined;
  const claims = payload as { iss?: unknown; sub?: unknown; iat?: unknown; iat_ms?: unknown; exp?: unknown; jwks?: { keys?: unknown } };
  const nowS = now.getTime() / 1000;
  if (claims.iss !== row.id || claims.sub !== row.id) return undefined;
  if (typeof claims.iat !== 'number' || typeof claims.exp !== 'number') return undefined;
  if (claims.iat > nowS + 60 || claims.exp < nowS || claims.exp - claims.iat > 300) return undefined;
  // Ordered to the millisecond: two rotations within a second are still told apart.
  const issuedMs = typeof claims.iat_ms === 'number' && Math.floor(claims.iat_ms / 1000) === claims.iat ? claims.iat_ms : claims.iat * 1000;
  return acceptedKeys(row, claims.jwks?.keys, issuedMs, now.getTime());
}

/**
 * The rules every rollover follows, whatever carried it (the signature was checked by the caller):
 * newer than the last configuration accepted, 1 to 10 public keys whose windows can be read (an
 * unreadable window would make every statement about the child malformed), and no key's end later
 * than the one this registry holds. Undefined when the offer is refused. The issue time recorded is
 * never later than `nowMs`: a configuration dated ahead (inside the skew the carriers allow) would
 * otherwise refuse the child's next configurations until that time came (docs/decisions.md 100).
 */
export function acceptedKeys(row: RegistryRow, offered: unknown, issuedMs: number, nowMs: number): KeyUpdate | undefined {
  if (!(issuedMs > row.entity_iat)) return undefined;
  if (!Array.isArray(offered) || offered.length === 0 || offered.length > 10) return undefined;
  if (offered.some((key) => typeof key !== 'object' || key === null || hasPrivateKeyMaterial(key as Record<string, unknown>) || unreadableWindowMember(key) !== undefined)) return undefined;
  return { keys: keepEarlierEnds(offered as Record<string, unknown>[], row.jwks.keys), iat: Math.min(issuedMs, nowMs) };
}

/**
 * Replaces the child's keys unless another instance changed the record since it was read, or already
 * accepted a configuration as new or newer. Recorded as `trust.key_rotated` about the child.
 */
export async function replaceChildKeys(storage: Storage, row: RegistryRow, update: KeyUpdate, now: Date, source: RolloverSource): Promise<RegistryRow> {
  const at = now.toISOString();
  const { result } = await runWrite(storage, async (unit) => {
    const current = await findRegistry(unit.tx, row.id);
    if (!current || current.status !== 'active') throw new WardError('REGISTRY_REVOKED', undefined, { registry_id: row.id });
    if (current.version !== row.version || update.iat <= current.entity_iat) return current;
    const next: RegistryRow = { ...current, jwks: { keys: update.keys }, entity_iat: update.iat, version: current.version + 1, updated_at: at };
    if (!(await updateRegistry(unit.tx, next, current.version))) return current;
    // A child's rollover is a key rotation of that registry, as this registry records it.
    unit.emit({ type: 'trust.key_rotated', subject: row.id, occurred_at: at, data: { registry_id: row.id, kids: update.keys.map((key) => key.kid ?? null), source } });
    return next;
  });
  return result;
}

/**
 * A child may shorten a key's life but never lengthen it or make it open again: once this registry
 * holds an end for a key, the earlier end stands.
 */
function keepEarlierEnds(keys: Record<string, unknown>[], held: Record<string, unknown>[]): Record<string, unknown>[] {
  return keys.map((key) => {
    const before = held.find((candidate) => candidate.kid === key.kid)?.not_after;
    if (typeof before !== 'string') return key;
    const after = typeof key.not_after === 'string' ? key.not_after : undefined;
    return { ...key, not_after: after !== undefined && Date.parse(after) < Date.parse(before) ? after : before };
  });
}
