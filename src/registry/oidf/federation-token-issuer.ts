/**
 * The one registry whose federation tokens this registry accepts, and the keys it checks them with
 * (docs/federation.md "Federated discovery"): its parent, as its own OpenID Federation trust chain
 * states it (./superior-in-chain.ts). Only while that chain cannot be had (a parent of a build
 * before OpenID Federation, or none built yet) do the keys of the parent's Ward grant stand in; that
 * fallback goes with the grant in phase 4 of the migration. A registry its parent revoked accepts none.
 *
 * A token naming the parent but signed by a key the chain held does not state for it (the parent has
 * just rotated) is judged with the chain held, so refused this time, and has the chain rebuilt in the
 * background (at most once per 10 s, ./own-trust-chain.ts): the parent's next token verifies with the
 * key the rebuilt chain names, within seconds rather than when the chain was next due.
 */
import { decodeJwt, decodeProtectedHeader } from 'jose';
import type { RegistryServices } from '../services.ts';
import { superiorInChain } from './superior-in-chain.ts';
import type { PublishedJwk } from '../../core/crypto/key-set.ts';
import type { TokenIssuer } from '../federation/federation-token.ts';

export async function federationTokenIssuer(ward: Pick<RegistryServices, 'parentLink' | 'oidfTrustChain'>, token?: string): Promise<TokenIssuer | undefined> {
  if (ward.parentLink.revoked()) return undefined;
  const chain = await ward.oidfTrustChain();
  const superior = chain ? superiorInChain(chain) : undefined;
  if (superior) {
    if (token !== undefined && signedByUnstatedKey(token, superior)) void ward.oidfTrustChain({ because: 'superior-key-unknown' });
    return { id: superior.id, jwks: superior.jwks };
  }
  const granted = ward.parentLink.parent();
  return granted ? { id: granted.id, jwks: { keys: granted.jwks.keys as PublishedJwk[] } } : undefined;
}

/** Whether the (unverified) token says it is the superior's but names a key the chain does not state for it. */
function signedByUnstatedKey(token: string, superior: { id: string; jwks: { keys: PublishedJwk[] } }): boolean {
  try {
    const { kid } = decodeProtectedHeader(token);
    if (typeof kid !== 'string' || decodeJwt(token).iss !== superior.id) return false;
    return !superior.jwks.keys.some((key) => key.kid === kid);
  } catch {
    return false;
  }
}
