import type { Clock } from './clock.ts';
import type { PricingTier, PricingTierLimits } from './pricing-tiers.ts';

export const SCOPES = ['registry:read', 'registry:write', 'registry:admin', 'mesh:invoke'] as const;
export type Scope = (typeof SCOPES)[number];

/** Who is calling. `credentialId` scopes idempotency keys; anonymous callers share one. */
export type Principal = {
  kind: 'anonymous' | 'api_key' | 'jwt' | 'mtls' | 'dpop' | 'registry';
  credentialId: string;
  orgId?: string;
};

/**
 * What domain code knows about a call: never the HTTP request itself (house style), so services can be
 * driven from tests, the CLI and background jobs alike.
 */
export type CallContext = {
  readonly principal: Principal;
  readonly scopes: ReadonlySet<Scope>;
  readonly requestId: string;
  readonly clock: Clock;
  /**
   * The caller's pricing tier (the spec's Limits table) and the limits in force for it; absent for
   * anonymous and system callers. Not a registry's tier (root, sovereign, organisational).
   */
  readonly pricingTier?: { name: PricingTier; limits: PricingTierLimits };
};

/** Who the request is from, once its credential (if any) has been verified (registry/credentials). */
export type Caller = {
  principal: Principal;
  scopes: ReadonlySet<Scope>;
  pricingTier?: { name: PricingTier; limits: PricingTierLimits };
};

export const ANONYMOUS: Principal = { kind: 'anonymous', credentialId: 'anonymous' };

/** A context for work the registry does on its own behalf (seeding, background jobs). */
export function systemContext(clock: Clock, requestId = 'system'): CallContext {
  return { principal: { kind: 'anonymous', credentialId: 'system' }, scopes: new Set(SCOPES), requestId, clock };
}
