/**
 * The pricing tiers and their limits, exactly the spec's Limits table. `null` means unlimited;
 * enterprise figures are "custom": set per key (`limits` on the key), unlimited where not set.
 */
export const PRICING_TIER_NAMES = ['developer', 'team', 'business', 'scale', 'enterprise'] as const;
export type PricingTier = (typeof PRICING_TIER_NAMES)[number];

export type PricingTierLimits = {
  requests_per_minute: number | null;
  requests_per_day: number | null;
  max_agents: number | null;
  discovery_per_minute: number | null;
  routing_per_minute: number | null;
  federation: boolean;
  events_sse: boolean;
  sla: string | null;
};

export const PRICING_TIERS: Readonly<Record<PricingTier, PricingTierLimits>> = {
  developer: { requests_per_minute: 60, requests_per_day: 1000, max_agents: 5, discovery_per_minute: 30, routing_per_minute: 30, federation: false, events_sse: false, sla: null },
  team: { requests_per_minute: 300, requests_per_day: 10_000, max_agents: 25, discovery_per_minute: 100, routing_per_minute: 100, federation: false, events_sse: true, sla: '99.5%' },
  business: { requests_per_minute: 1000, requests_per_day: 100_000, max_agents: 100, discovery_per_minute: 500, routing_per_minute: 500, federation: true, events_sse: true, sla: '99.9%' },
  scale: { requests_per_minute: 5000, requests_per_day: 1_000_000, max_agents: 500, discovery_per_minute: 2000, routing_per_minute: 2000, federation: true, events_sse: true, sla: '99.95%' },
  enterprise: { requests_per_minute: null, requests_per_day: null, max_agents: null, discovery_per_minute: null, routing_per_minute: null, federation: true, events_sse: true, sla: '99.99%' },
};

/** Per-key overrides (enterprise "custom" figures); only the numeric limits can be overridden. */
export type LimitOverrides = Partial<Pick<PricingTierLimits, 'requests_per_minute' | 'requests_per_day' | 'max_agents' | 'discovery_per_minute' | 'routing_per_minute'>>;

/** The limits in force for a key: its tier's, with its overrides applied. */
export function effectiveLimits(tier: PricingTier, overrides: LimitOverrides | null): PricingTierLimits {
  return { ...PRICING_TIERS[tier], ...(overrides ?? {}) };
}
