/**
 * The child registries a registry delegates to (contract §5, docs/federation.md): registration under
 * the tier rules, listing, revocation, and the signed delegation statements and status tokens that
 * let a verifier holding only the root's keys check a chain. Keys of a child change only through
 * an entity configuration signed by a key the parent already holds for it (rollover, not takeover).
 */
import type { CallContext } from '../../core/call-context.ts';
import { entityIdentifier } from '../../contract/openid-federation.ts';
import { WardError } from '../../core/errors.ts';
import { registryUri } from '../../core/ids.ts';
import { normaliseJurisdiction } from '../../core/jurisdictions.ts';
import {
  findActiveChildByEntityId,
  findActiveSovereign,
  findRegistry,
  insertRegistry,
  listRegistries,
  updateRegistry,
  type RegistryFilter,
  type RegistryRow,
} from './storage/registry-store.ts';
import type { WriteUnit } from '../storage/write-unit.ts';
import { writeOnce, type WriteRequest } from '../storage/idempotency.ts';
import { decodeCursor, encodeCursor } from '../../contract/cursor.ts';
import { childStatus, findChild, grantDelegation } from './child-grants.ts';
import { resolveChildKeys } from './child-keys.ts';
import type { ChildRegistriesDeps, PreparedRegistry, RegisterRegistryInput, RegistryRecord, TrustAnchorInput } from './child-registry-types.ts';
import { checkChildTier } from './tier-policy.ts';

export * from './child-registry-types.ts';

export function createChildRegistries(deps: ChildRegistriesDeps) {
  return {
    /**
     * Checks a registration and resolves the child's keys, before any transaction: fetching keys
     * may take up to REGISTRY_FEDERATION_TIMEOUT_MS, and no write lock is held meanwhile.
     */
    prepare: (ctx: CallContext, input: RegisterRegistryInput): Promise<PreparedRegistry> => prepareRegistration(deps, ctx, input),
    /** Registers a prepared child; conflicts are checked inside the write unit, so two racing registrations cannot both win. */
    register: (unit: WriteUnit, ctx: CallContext, prepared: PreparedRegistry): Promise<RegistryRecord> => registerChild(deps, unit, ctx, prepared),
    get: async (id: string): Promise<RegistryRecord> => registryRecord(deps, await findChild(deps, id)),
    list: (filter: RegistryFilter, page: { cursor?: string; limit: number }) => listChildren(deps, filter, page),
    /** Every active child (for federated discovery), read a page at a time in id order. */
    activeChildren: (): Promise<RegistryRow[]> => activeChildren(deps),
    /** The active child whose entity identifier (its `api_base_url`) is `entityId`, by the store's index. */
    activeChildAt: (entityId: string): Promise<RegistryRow | undefined> => findActiveChildByEntityId(deps.storage.db, entityId),
    revoke: (unit: WriteUnit, ctx: CallContext, id: string, reason: string): Promise<RegistryRecord> => revokeChild(deps, unit, ctx, id, reason),
    /**
     * A fresh delegation statement for an active child, with this registry's own chain above it. An
     * entity configuration presented by the child (signed by a key this registry holds for it) first
     * replaces the child's keys: that is how a child's key rotation reaches its statements.
     */
    grant: (id: string, entityConfiguration?: string) => grantDelegation(deps, id, entityConfiguration),
    /** Online status of a child, for verifiers (docs/federation.md "Status tokens"). */
    status: (id: string) => childStatus(deps, id),
    /**
     * Registers a child once per idempotency key, in a write unit of its own: checks and key fetching
     * run first, outside it, so no lock is held while the child answers.
     */
    async registerOnce(write: WriteRequest, input: RegisterRegistryInput) {
      let prepared: PreparedRegistry | undefined;
      return writeOnce(
        deps,
        write,
        async (unit) => {
          const record = await registerChild(deps, unit, write.ctx, prepared as PreparedRegistry);
          return { status: 201, headers: { location: `/v1/registries/${encodeURIComponent(record.registry_id)}` }, body: record };
        },
        async () => {
          prepared = await prepareRegistration(deps, write.ctx, input);
        },
      );
    },
    /** Revokes a child once per idempotency key, in a write unit of its own. */
    revokeOnce: (write: WriteRequest, id: string, reason: string) =>
      writeOnce(deps, write, async (unit) => ({ status: 200, headers: {}, body: await revokeChild(deps, unit, write.ctx, id, reason) })),
  };
}

export type ChildRegistries = ReturnType<typeof createChildRegistries>;

function registryRecord(deps: ChildRegistriesDeps, row: RegistryRow): RegistryRecord {
  return {
    registry_id: row.id,
    name: row.name,
    display_name: row.display_name,
    jurisdiction: row.jurisdiction,
    tier: row.tier,
    api_base_url: row.api_base_url,
    trust_anchors: row.trust_anchors as Required<TrustAnchorInput>[],
    jwks: row.jwks,
    status: row.status,
    revoked_at: row.revoked_at,
    revocation_reason: row.revocation_reason,
    parent_id: deps.registryId,
    delegation_chain: [...deps.trustChain().delegationChain, row.id],
    version: row.version,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

async function prepareRegistration(deps: ChildRegistriesDeps, ctx: CallContext, input: RegisterRegistryInput): Promise<PreparedRegistry> {
  const { config } = deps;
  const now = ctx.clock.now();
  const jurisdiction = normaliseJurisdiction(input.jurisdiction);
  if (!jurisdiction) {
    throw new WardError('VALIDATION_ERROR', 'The request failed validation.', { errors: [{ in: 'body', pointer: '/jurisdiction', reason: 'must be an assigned ISO 3166-1 alpha-2 code' }] });
  }
  checkChildTier(config.REGISTRY_TIER, config.REGISTRY_JURISDICTION, input, jurisdiction);
  const name = input.name ?? slug(input.display_name);
  if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(name)) {
    throw new WardError('VALIDATION_ERROR', 'The request failed validation.', { errors: [{ in: 'body', pointer: '/name', reason: 'give a name of lower-case letters, digits and hyphens' }] });
  }
  const { anchors, jwks } = await resolveChildKeys(input, now, { timeoutMs: config.REGISTRY_FEDERATION_TIMEOUT_MS, fetch: deps.fetch ?? fetch });
  return { input, jurisdiction, name, id: registryUri(jurisdiction, name), anchors, jwks };
}

async function registerChild(deps: ChildRegistriesDeps, unit: WriteUnit, ctx: CallContext, prepared: PreparedRegistry): Promise<RegistryRecord> {
  const { input, jurisdiction, name, id, anchors, jwks } = prepared;
  // A child named like this registry or one above it would speak as that registry.
  if (deps.trustChain().delegationChain.includes(id) || (await findRegistry(unit.tx, id))) {
    throw new WardError('REGISTRY_CONFLICT', 'A registry with this URI exists.', { registry_id: id });
  }
  if (input.tier === 'sovereign') {
    const existing = await findActiveSovereign(unit.tx, jurisdiction);
    if (existing) throw new WardError('REGISTRY_CONFLICT', `${jurisdiction} already has a sovereign registry.`, { registry_id: existing.id, jurisdiction });
  }
  const apiBaseUrl = input.api_base_url ? entityIdentifier(input.api_base_url) : null;
  if (apiBaseUrl !== null) await refuseTakenAddress(unit, apiBaseUrl);
  const at = ctx.clock.now().toISOString();
  const row: RegistryRow = {
    id,
    name,
    display_name: input.display_name,
    jurisdiction,
    tier: input.tier,
    api_base_url: apiBaseUrl,
    trust_anchors: anchors,
    jwks,
    status: 'active',
    revoked_at: null,
    revocation_reason: null,
    version: 1,
    entity_iat: 0,
    created_at: at,
    updated_at: at,
  };
  // Write units run one at a time, so the check above sees every active child; the store's unique index
  // holds the rule for any writer that does not (decisions.md 94).
  if (!(await insertRegistry(unit.tx, row))) throw addressConflict(apiBaseUrl as string, (await findActiveChildByEntityId(unit.tx, apiBaseUrl as string))?.id);
  unit.emit({ type: 'registry.registered', subject: id, occurred_at: at, data: { registry_id: id, tier: row.tier, jurisdiction, display_name: row.display_name, parent_id: deps.registryId } });
  return registryRecord(deps, row);
}

/**
 * A child's `api_base_url` is its OpenID Federation entity identifier: two active children at one
 * address would leave the fetch endpoint to pick one. A revoked child's address may be taken again.
 */
async function refuseTakenAddress(unit: WriteUnit, apiBaseUrl: string): Promise<void> {
  const holder = await findActiveChildByEntityId(unit.tx, apiBaseUrl);
  if (holder) throw addressConflict(apiBaseUrl, holder.id);
}

function addressConflict(apiBaseUrl: string, holder?: string): WardError {
  return new WardError('REGISTRY_CONFLICT', 'An active child registry has this api_base_url (its entity identifier).', {
    api_base_url: apiBaseUrl,
    ...(holder ? { registry_id: holder } : {}),
  });
}

async function listChildren(deps: ChildRegistriesDeps, filter: RegistryFilter, page: { cursor?: string; limit: number }) {
  const afterId = page.cursor === undefined ? undefined : decodeCursor(page.cursor, 'registries');
  const rows = await listRegistries(deps.storage.db, filter, { limit: page.limit + 1, ...(afterId ? { afterId } : {}) });
  const shown = rows.slice(0, page.limit);
  const last = shown.at(-1);
  return { registries: shown.map((row) => registryRecord(deps, row)), next_cursor: rows.length > page.limit && last ? encodeCursor('registries', last.id) : null };
}

async function activeChildren(deps: ChildRegistriesDeps): Promise<RegistryRow[]> {
  const pageSize = 500;
  const rows: RegistryRow[] = [];
  for (let afterId: string | undefined; ; ) {
    const page = await listRegistries(deps.storage.db, { status: 'active' }, { limit: pageSize, ...(afterId ? { afterId } : {}) });
    rows.push(...page);
    if (page.length < pageSize) return rows;
    afterId = page.at(-1)?.id;
  }
}

async function revokeChild(deps: ChildRegistriesDeps, unit: WriteUnit, ctx: CallContext, id: string, reason: string): Promise<RegistryRecord> {
  const row = await findRegistry(unit.tx, id);
  if (!row) throw new WardError('REGISTRY_NOT_FOUND', undefined, { registry_id: id });
  if (row.status === 'revoked') throw new WardError('INVALID_STATE_TRANSITION', 'The registry is already revoked.', { registry_id: id, status: row.status });
  const at = ctx.clock.now().toISOString();
  const next: RegistryRow = { ...row, status: 'revoked', revoked_at: at, revocation_reason: reason, version: row.version + 1, updated_at: at };
  if (!(await updateRegistry(unit.tx, next, row.version))) throw new WardError('VERSION_CONFLICT', undefined, { registry_id: id });
  unit.emit({ type: 'registry.revoked', subject: id, occurred_at: at, data: { registry_id: id, reason, parent_id: deps.registryId } });
  return registryRecord(deps, next);
}

function slug(displayName: string): string {
  return displayName
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
}
