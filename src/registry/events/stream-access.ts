import type { CallContext } from '../../core/call-context.ts';

/**
 * The tier gate of the change stream (spec Limits, "Events SSE"; contract §6): developer-tier keys
 * get 403 `TIER_FEATURE_UNAVAILABLE`, every other tier may stream.
 *
 * SEAM: API keys and tiers do not exist in this build (authentication is `disabled`, every caller is
 * anonymous), so this allows everyone. The authentication release puts the tier on the call
 * context and makes this throw for `developer`; the route already calls it before anything else.
 */
export function assertStreamAllowed(_context: CallContext): void {
  // Intentionally empty until the call context carries a tier.
}
