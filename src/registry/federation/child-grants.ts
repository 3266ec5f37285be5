/**
 * What a registry gives its children to prove their place (docs/federation.md): a delegation grant
 * (a fresh signed statement under this registry's own chain) and a signed status token. A grant
 * request may carry the child's entity configuration: signed by a key this registry already holds
 * for the child, it replaces the child's keys (rollover, not takeover).
 */
import { isDeepStrictEqual } from 'node:util';
import { WardError } from '../../core/errors.ts';
import { childConstraints, signDelegationStatement, signStatusToken } from '../../contract/delegation-statement.ts';
import { findRegistry, type RegistryRow } from './storage/registry-store.ts';
import { replaceChildKeys, rolledOverKeys } from './child-key-rollover.ts';
import type { ChildRegistriesDeps, DelegationGrant } from './child-registry-types.ts';

/** The child's row, or REGISTRY_NOT_FOUND. */
export async function findChild(deps: ChildRegistriesDeps, id: string): Promise<RegistryRow> {
  const row = await findRegistry(deps.storage.db, id);
  if (!row) throw new WardError('REGISTRY_NOT_FOUND', undefined, { registry_id: id });
  return row;
}

/**
 * A fresh delegation statement for an active child, with this registry's own chain above it. An
 * entity configuration presented by the child (signed by a key this registry holds for it) first
 * replaces the child's keys: that is how a child's key rotation reaches its statements.
 */
export async function grantDelegation(deps: ChildRegistriesDeps, id: string, entityConfiguration?: string): Promise<DelegationGrant> {
  const { config, signer, registryId } = deps;
  let row = await findChild(deps, id);
  if (row.status === 'revoked') throw new WardError('REGISTRY_REVOKED', undefined, { registry_id: id, reason: row.revocation_reason });
  const now = deps.clock.now();
  if (entityConfiguration) row = await rolledOver(deps, row, entityConfiguration, now);
  const statement = await signDelegationStatement(signer, {
    iss: registryId,
    sub: row.id,
    tier: row.tier,
    jurisdiction: row.jurisdiction,
    jwks: row.jwks,
    api_base_url: row.api_base_url,
    constraints: childConstraints(config.REGISTRY_TIER, row.jurisdiction),
    now,
    ttlSeconds: config.REGISTRY_DELEGATION_TTL_SECONDS,
  });
  const own = deps.trustChain();
  return {
    sub: row.id,
    delegation_chain: [...own.delegationChain, row.id],
    statements: [...own.statements, statement],
    issuer_jwks: signer.jwks(),
    expires_at: new Date(now.getTime() + config.REGISTRY_DELEGATION_TTL_SECONDS * 1000).toISOString(),
  };
}

/** Online status of a child, for verifiers (docs/federation.md "Status tokens"). */
export async function childStatus(deps: ChildRegistriesDeps, id: string) {
  const row = await findChild(deps, id);
  const status = row.status;
  return {
    sub: row.id,
    status,
    revoked_at: row.revoked_at,
    reason: row.revocation_reason,
    status_token: await signStatusToken(deps.signer, { iss: deps.registryId, sub: row.id, status, revoked_at: row.revoked_at }, deps.clock.now()),
  };
}

/**
 * The child's row after its entity configuration: signatures by several of its keys (space-separated);
 * one by a key we hold is enough. Only a change of keys is written: a replayed header with the same
 * keys changes nothing, and one with older keys is older than the iat recorded with the change.
 */
async function rolledOver(deps: ChildRegistriesDeps, row: RegistryRow, entityConfiguration: string, now: Date): Promise<RegistryRow> {
  for (const jws of entityConfiguration.split(' ').slice(0, 10)) {
    const update = await rolledOverKeys(row, jws, now);
    if (!update) continue;
    return isDeepStrictEqual(update.keys, row.jwks.keys) ? row : replaceChildKeys(deps.storage, row, update, now, 'entity_configuration');
  }
  return row;
}
