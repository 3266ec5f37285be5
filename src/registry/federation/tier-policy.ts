/**
 * The federation's tier rules (contract §5), pure: which registry may delegate to which. (Registry
 * tiers — root, sovereign, organisational — are not the pricing tiers of API keys in core/pricing-tiers.ts.)
 */
import { WardError } from '../../core/errors.ts';
import type { ChildTier, RegisterRegistryInput } from './child-registry-types.ts';

/** Contract §5: root → sovereign (one per country), sovereign → organisational of its country, organisational → none. */
export function checkChildTier(own: ChildTier | 'root', ownJurisdiction: string, input: RegisterRegistryInput, jurisdiction: string): void {
  const details = { tier: own, child_tier: input.tier, jurisdiction };
  if (own === 'organisational') throw new WardError('TIER_VIOLATION', 'An organisational registry accepts no child registries.', details);
  if (own === 'root' && input.tier !== 'sovereign') throw new WardError('TIER_VIOLATION', 'The root accepts only sovereign registries.', details);
  if (own === 'sovereign') {
    if (input.tier !== 'organisational') throw new WardError('TIER_VIOLATION', 'A sovereign registry accepts only organisational registries.', details);
    if (jurisdiction !== ownJurisdiction) {
      throw new WardError('TIER_VIOLATION', `A sovereign registry accepts organisational registries of its own jurisdiction (${ownJurisdiction}) only.`, details);
    }
  }
}
