/**
 * What a superior registry says about its subordinates in OpenID Federation terms (OIDF §3, §8.1,
 * §8.2): the subordinate statement its fetch endpoint serves, and the list endpoint's entity
 * identifiers. A subordinate is a child registry registered with an `api_base_url`, which is its
 * entity identifier. Ward's delegation becomes OIDF claims here (docs/federation.md, the mapping table):
 * the child's keys → `jwks`, the delegation lifetime → `exp`, the path length → `constraints`, the
 * child's URI, tier and jurisdiction → `metadata.ward_registry`, and what holds for everything below the
 * child (its jurisdiction, the tiers below it) → `metadata_policy.ward_registry`.
 */
import {
  ENTITY_STATEMENT_TYP,
  FEDERATION_ENTITY_TYPE,
  WARD_REGISTRY_ENTITY_TYPE,
  entityIdentifier,
  oidfEndpointPath,
  type EntityStatementClaims,
} from '../../../contract/openid-federation.ts';
import { childConstraints, type ChildTier } from '../../../contract/delegation-statement.ts';
import { WARD_TRUST_MARKS } from '../../../contract/oidf-trust-marks.ts';
import type { PublishedJwk } from '../../../core/crypto/key-set.ts';
import type { RegistryRow } from '../storage/registry-store.ts';
import { ownEntityId } from './entity-configuration.ts';
import { OidfError } from '../../../client/oidf/oidf-error.ts';
import type { OidfDeps } from './oidf-deps.ts';

/** The entity types every Ward registry has: a subordinate list filtered by others is empty. */
const SUBORDINATE_ENTITY_TYPES: ReadonlySet<string> = new Set([FEDERATION_ENTITY_TYPE, WARD_REGISTRY_ENTITY_TYPE]);

/** The tiers a registry of `tier` and everything below it may have. */
function tiersFrom(tier: ChildTier): ChildTier[] {
  return tier === 'sovereign' ? ['sovereign', 'organisational'] : ['organisational'];
}

/**
 * The active child whose entity identifier (its `api_base_url`) is `sub`: one at most, as registration
 * refuses a second active child at an address. A revoked child is no longer a subordinate: like an
 * unknown one it is `not_found` (OIDF §8.1.2), so no resolver can build a chain through it.
 */
export async function findSubordinate(deps: Pick<OidfDeps, 'activeChildAt'>, sub: string): Promise<RegistryRow> {
  const row = await deps.activeChildAt(sub);
  if (!row) throw new OidfError('not_found', `${sub} is not an active subordinate of this registry.`);
  return row;
}

/** The claims of this registry's subordinate statement about `row` at `now`. */
export function subordinateStatementClaims(deps: OidfDeps, row: RegistryRow, now: Date): EntityStatementClaims {
  const id = ownEntityId(deps);
  const iat = Math.floor(now.getTime() / 1000);
  const ward = childConstraints(deps.config.REGISTRY_TIER, row.jurisdiction);
  return {
    iss: id,
    sub: entityIdentifier(row.api_base_url as string),
    iat,
    exp: iat + deps.config.REGISTRY_DELEGATION_TTL_SECONDS,
    jwks: { keys: row.jwks.keys as PublishedJwk[] },
    // About the child itself: which registry stands at this address.
    metadata: { [WARD_REGISTRY_ENTITY_TYPE]: { registry_id: row.id, tier: row.tier, jurisdiction: row.jurisdiction } },
    // About the child and everything below it: its country, and tiers that only descend.
    metadata_policy: {
      [WARD_REGISTRY_ENTITY_TYPE]: {
        jurisdiction: { one_of: ward.allowed_jurisdictions },
        tier: { one_of: tiersFrom(row.tier) },
      },
    },
    constraints: { max_path_length: ward.max_path_length, allowed_entity_types: [WARD_REGISTRY_ENTITY_TYPE] },
    source_endpoint: `${id}${oidfEndpointPath('federation_fetch_endpoint')}`,
  };
}

/**
 * The fetch endpoint's answer for `sub` (OIDF §8.1): a fresh subordinate statement signed with the
 * registry's current key, naming the child's keys as its entity configuration last offered them. `sub`
 * naming this registry is `invalid_request`; a registry revoked by its own parent issues nothing
 * further (`not_found`), as its Ward grants stop too.
 */
export async function signSubordinateStatement(deps: OidfDeps, sub: string): Promise<string> {
  if (sub === ownEntityId(deps)) throw new OidfError('invalid_request', 'sub is this registry itself: its entity configuration is at /.well-known/openid-federation.');
  if (deps.revoked()) throw new OidfError('not_found', 'This registry was revoked by its superior and issues no subordinate statements.');
  // The child's own configuration may carry a key it rolled over to (./subordinate-rollover.ts).
  const row = await deps.subordinateRollover(await findSubordinate(deps, sub));
  return deps.signer.sign(subordinateStatementClaims(deps, row, deps.clock.now()), ENTITY_STATEMENT_TYP);
}

export type SubordinateFilter = { entityTypes: string[]; intermediate?: boolean; trustMarked?: boolean; trustMarkType?: string };

/**
 * Whether an active child with an address passes the trust-mark filters: every such child holds this
 * registry's `delegated-registry` mark (it is issued for exactly them), and no other mark of a type
 * Ward issues about registries.
 */
function passesTrustMarkFilter(filter: SubordinateFilter): boolean {
  if (filter.trustMarkType === undefined) return true;
  return WARD_TRUST_MARKS.some((mark) => mark.subject === 'registry' && mark.type === filter.trustMarkType);
}

/**
 * The list endpoint's answer (OIDF §8.2): the entity identifiers of the active children with an
 * address, in registry-URI order. `intermediate` keeps sovereign children (they take subordinates)
 * or organisational ones; `entity_type` keeps all of them when every type asked is one a Ward
 * registry has, none otherwise; `trust_mark_type` all of them for `delegated-registry`, none otherwise.
 */
export async function listSubordinates(deps: OidfDeps, filter: SubordinateFilter): Promise<string[]> {
  if (!filter.entityTypes.every((type) => SUBORDINATE_ENTITY_TYPES.has(type)) || !passesTrustMarkFilter(filter)) return [];
  // trust_marked=true keeps the children holding a mark: all of them hold delegated-registry.
  const rows = await deps.activeChildren();
  const ids = rows
    .filter((row) => row.api_base_url !== null)
    .filter((row) => filter.intermediate === undefined || (row.tier === 'sovereign') === filter.intermediate)
    .map((row) => entityIdentifier(row.api_base_url as string));
  return [...new Set(ids)];
}
