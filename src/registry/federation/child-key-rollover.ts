/**
 * A child's key rollover (docs/federation.md): the child presents an entity configuration signed by a
 * key the parent already holds for it; only then, and only if newer than the last one accepted, do its
 * keys change. Pure apart from the signature check.
 */
import type { RegistryRow } from '../storage/stores/registry-store.ts';
import { hasPrivateKeyMaterial, verifiedPayload, type PublishedJwk } from '../../core/crypto/key-set.ts';
import { ENTITY_CONFIGURATION_TYP } from './child-registry-types.ts';
import { unreadableWindowMember } from '../../contract/delegation-statement.ts';

/**
 * The keys and iat of an entity configuration, if a key we hold for the child signed it and it is
 * newer than the last one accepted (an older or replayed one could roll the keys back); else undefined.
 */
export async function rolledOverKeys(row: RegistryRow, jws: string, now: Date): Promise<{ keys: Record<string, unknown>[]; iat: number } | undefined> {
  const payload = await verifiedPayload(jws, ENTITY_CONFIGURATION_TYP, row.jwks.keys as PublishedJwk[], now);
  if (typeof payload !== 'object' || payload === null) return undefined;
  const claims = payload as { iss?: unknown; sub?: unknown; iat?: unknown; iat_ms?: unknown; exp?: unknown; jwks?: { keys?: unknown } };
  const nowS = now.getTime() / 1000;
  if (claims.iss !== row.id || claims.sub !== row.id) return undefined;
  if (typeof claims.iat !== 'number' || typeof claims.exp !== 'number') return undefined;
  if (claims.iat > nowS + 60 || claims.exp < nowS || claims.exp - claims.iat > 300) return undefined;
  // Ordered to the millisecond: two rotations within a second are still told apart.
  const issuedMs = typeof claims.iat_ms === 'number' && Math.floor(claims.iat_ms / 1000) === claims.iat ? claims.iat_ms : claims.iat * 1000;
  if (issuedMs <= row.entity_iat) return undefined;
  const keys = claims.jwks?.keys;
  if (!Array.isArray(keys) || keys.length === 0 || keys.length > 10) return undefined;
  // An unreadable window would make every statement about the child malformed.
  if (keys.some((key) => typeof key !== 'object' || key === null || hasPrivateKeyMaterial(key) || unreadableWindowMember(key) !== undefined)) return undefined;
  return { keys: keepEarlierEnds(keys as Record<string, unknown>[], row.jwks.keys), iat: issuedMs };
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
