import type { CallContext } from '../../core/call-context.ts';
import { WardError } from '../../core/errors.ts';

/**
 * Tier gating of the event stream (spec Limits, "Events SSE"; contract §6): a caller whose tier does
 * not include it — the developer tier — gets 403 TIER_FEATURE_UNAVAILABLE. Callers without a tier
 * (anonymous in `disabled` mode, or a token credential) are not gated by tier.
 */
export function assertStreamAllowed(context: CallContext): void {
  if (context.pricingTier && !context.pricingTier.limits.events_sse) {
    throw new WardError('TIER_FEATURE_UNAVAILABLE', 'The event stream is not part of this tier.', {
      feature: 'events_sse',
      tier: context.pricingTier.name,
    });
  }
}
