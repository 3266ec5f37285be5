/**
 * The trust anchor a registry below the root pins for its own OpenID Federation chain (docs/decisions.md
 * 101): the top of the chain is otherwise whoever the last configuration read says it is, with the keys
 * it states itself, and a middlebox in front of a superior could stand in as the top with keys of its own.
 *
 * Trust on first use, then continuity: the first chain that validates pins its top's entity identifier
 * and keys (as good as the configured parent URL, which production requires to be https; the Ward grant
 * path trusts its root the same way). Afterwards a chain's top counts only when it is the pinned entity,
 * read from the pinned identifier itself (not from a URL some superior's `authority_hints` named), and
 * its configuration verifies with a pinned key, or (a rollover at the top: the root signs with its new
 * key while it still publishes the retired one until its not_after) its own `jwks` still holds a
 * pinned key, the same key material (JWK thumbprint). The pin then follows the top's `jwks`. An
 * emergency rotation at the top (old keys gone at once) breaks continuity: the operator resets the pin
 * by deleting the `superior` federation state row (docs/federation.md).
 */
import { calculateJwkThumbprint, type JWK } from 'jose';
import { ENTITY_STATEMENT_TYP, type EntityStatementClaims } from '../../../contract/openid-federation.ts';
import { verifiedPayload, type PublishedJwk } from '../../../core/crypto/key-set.ts';

/** The pinned top: its entity identifier and the keys its last counted configuration stated. */
export type TrustAnchorPin = { entityId: string; keys: PublishedJwk[] };

/** A chain's top as read: where it was read from, the configuration, and its claims (not verified yet). */
type Top = { id: string; jwt: string; claims: EntityStatementClaims };

const thumbprint = (jwk: PublishedJwk) => calculateJwkThumbprint(jwk as JWK).catch(() => undefined);

/** Throws naming why `top` is not the pinned trust anchor; passes when nothing is pinned yet (first use). */
export async function checkTrustAnchorPin(pin: TrustAnchorPin | undefined, top: Top, now: Date): Promise<void> {
  if (!pin) return;
  if (top.id !== pin.entityId || top.claims.sub !== pin.entityId) {
    throw new Error(`the chain's top ${top.claims.sub} (read at ${top.id}) is not the pinned trust anchor ${pin.entityId}: refused (docs/decisions.md 101)`);
  }
  if ((await verifiedPayload(top.jwt, ENTITY_STATEMENT_TYP, pin.keys, now)) !== undefined) return;
  const pinned = new Set(await Promise.all(pin.keys.map(thumbprint)));
  pinned.delete(undefined);
  const stated = await Promise.all(((top.claims.jwks?.keys ?? []) as PublishedJwk[]).map(thumbprint));
  if (stated.some((print) => print !== undefined && pinned.has(print))) return;
  throw new Error(`the configuration of the trust anchor ${pin.entityId} neither verifies with a pinned key nor still states one: refused (an emergency rotation there needs the pin reset, docs/federation.md)`);
}

/** The pin a counted chain leaves: its top's identifier and keys. */
export function pinOf(top: EntityStatementClaims): TrustAnchorPin {
  return { entityId: top.sub, keys: (top.jwks?.keys ?? []) as PublishedJwk[] };
}
