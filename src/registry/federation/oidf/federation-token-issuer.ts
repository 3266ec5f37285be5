/**
 * The one registry whose federation tokens this registry accepts, and the keys it checks them with
 * (docs/federation.md "Federated discovery"): its parent, as its own OpenID Federation trust chain
 * states it (./superior-in-chain.ts). Only while that chain cannot be had (a parent of a build
 * before OpenID Federation, or none built yet) do the keys of the parent's Ward grant stand in; that
 * fallback goes with the grant in phase 4 of the migration. A registry its parent revoked accepts none.
 *
 * A token naming the parent but signed by a key the chain held does not state for it (the parent has
 * just rotated) has the chain rebuilt (at most once per 10 s, ./own-trust-chain.ts) and is judged with
 * the rebuilt chain when that comes within a second, else with the chain held (refused this time; the
 * parent's next token verifies), rather than when the chain was next due.
 */
import { decodeJwt, decodeProtectedHeader } from 'jose';
import type { FastifyInstance } from 'fastify';
import { superiorInChain } from './superior-in-chain.ts';
import type { PublishedJwk } from '../../../core/crypto/key-set.ts';
import type { TokenIssuer } from '../federation-token.ts';

export async function federationTokenIssuer(ward: Pick<FastifyInstance['ward'], 'parentLink' | 'oidfTrustChain'>, token?: string): Promise<TokenIssuer | undefined> {
  if (ward.parentLink.revoked()) return undefined;
  const chain = await ward.oidfTrustChain();
  const superior = chain ? superiorInChain(chain) : undefined;
  if (superior && token !== undefined && signedByUnstatedKey(token, superior)) {
    const rebuilt = await ward.oidfTrustChain({ because: 'superior-key-unknown' });
    const now = rebuilt ? superiorInChain(rebuilt) : undefined;
    if (now) return { id: now.id, jwks: now.jwks };
  }
  if (superior) return { id: superior.id, jwks: superior.jwks };
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
