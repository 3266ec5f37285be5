/**
 * The one registry whose federation tokens this registry accepts, and the keys it checks them with
 * (docs/federation.md "Federated discovery"): its parent, as its own OpenID Federation trust chain
 * states it (./superior-in-chain.ts). Only while that chain cannot be had (a parent of a build
 * before OpenID Federation, or none built yet) do the keys of the parent's Ward grant stand in; that
 * fallback goes with the grant in phase 4 of the migration. A registry its parent revoked accepts none.
 */
import type { RegistryServices } from '../services.ts';
import { superiorInChain } from './superior-in-chain.ts';
import type { PublishedJwk } from '../../core/crypto/key-set.ts';
import type { TokenIssuer } from '../federation/federation-token.ts';

export async function federationTokenIssuer(ward: Pick<RegistryServices, 'parentLink' | 'oidfTrustChain'>): Promise<TokenIssuer | undefined> {
  if (ward.parentLink.revoked()) return undefined;
  const chain = await ward.oidfTrustChain();
  const superior = chain ? superiorInChain(chain) : undefined;
  if (superior) return { id: superior.id, jwks: superior.jwks };
  const granted = ward.parentLink.parent();
  return granted ? { id: granted.id, jwks: { keys: granted.jwks.keys as PublishedJwk[] } } : undefined;
}
