import { WardError } from '../../core/errors.ts';
import type { ParentLink } from './parent-link.ts';

/**
 * A registry its parent revoked drops out of routing (issue: "revocation down the tiers"): its
 * routing advice and trust bundles would claim a chain that no longer stands, so it gives none
 * (403 `REGISTRY_REVOKED`). Discovery and the records stay
 * readable: they make no claim about the federation.
 */
export function refuseIfRevoked(ward: { parentLink: Pick<ParentLink, 'revoked'>; registryId: string }): void {
  const revoked = ward.parentLink.revoked();
  if (revoked) {
    throw new WardError('REGISTRY_REVOKED', 'This registry was revoked by its parent: it gives no routing advice or trust bundles.', {
      registry_id: ward.registryId,
      reason: revoked.reason,
    });
  }
}
