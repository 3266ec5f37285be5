/**
 * Who stands directly above this registry, as its own OpenID Federation trust chain says
 * (./own-trust-chain.ts; docs/federation.md "Federated discovery"). ES[1] is the superior's statement
 * about this registry; ES[2] is the statement about the superior by the entity above it, or the
 * superior's own configuration when it is the top. So the superior's keys are the ones the tier above
 * delegated to it (a key it rotated in counts once that statement names it), and its registry URI is
 * the one that tier states in `metadata.ward_registry`. The chain was validated before it was held.
 */
import { WARD_REGISTRY_ENTITY_TYPE } from '../../../contract/openid-federation.ts';
import type { PublishedJwk } from '../../../core/crypto/key-set.ts';
import { readEntityStatement } from '../../../client/oidf/trust-chain-validation.ts';

export type Superior = {
  /** The superior's entity identifier (`iss` of its statement about this registry). */
  entityId: string;
  /** The superior's `registry://` URI. */
  id: string;
  /** The keys the tier above states for the superior. */
  jwks: { keys: PublishedJwk[] };
};

/** Read once per chain: the edge asks on every request carrying a federation token. */
const read = new WeakMap<readonly string[], Superior | undefined>();

/** The superior of the chain's subject, or undefined for a chain too short or not linked as OIDF says. */
export function superiorInChain(chain: readonly string[]): Superior | undefined {
  if (!read.has(chain)) read.set(chain, superiorOf(chain));
  return read.get(chain);
}

function superiorOf(chain: readonly string[]): Superior | undefined {
  const [, about, above] = chain;
  if (about === undefined || above === undefined) return undefined;
  try {
    const statement = readEntityStatement(about, "the superior's statement");
    const superior = readEntityStatement(above, 'the statement about the superior');
    if (superior.sub !== statement.iss) return undefined;
    const id = superior.metadata?.[WARD_REGISTRY_ENTITY_TYPE]?.registry_id;
    if (typeof id !== 'string') return undefined;
    return { entityId: statement.iss, id, jwks: superior.jwks };
  } catch {
    return undefined;
  }
}
