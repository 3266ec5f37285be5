/**
 * The child registries a registry delegates to (contract §5, docs/federation.md): registration under
 * the tier rules, listing, revocation, and the signed delegation statements and status tokens that
 * let a verifier holding only the root's keys check a chain. Keys of a child change only through
 * an entity configuration signed by a key the parent already holds for it (rollover, not takeover).
 */
import { isDeepStrictEqual } from 'node:util';
import type { CallContext } from '../../core/call-context.ts';
import type { Clock } from '../../core/clock.ts';
import type { Config } from '../../core/config.ts';
import type { RegistrySigner } from '../trust/registry-signer.ts';
import { WardError } from '../../core/errors.ts';
import { registryUri } from '../../core/ids.ts';
import { normaliseJurisdiction } from '../../core/jurisdictions.ts';
import type { Storage } from '../storage/database.ts';
import {
  findActiveSovereign,
  findRegistry,
  insertRegistry,
  listRegistries,
  updateRegistry,
  type RegistryFilter,
  type RegistryRow,
} from '../storage/stores/registry-store.ts';
import { runWrite, type WriteUnit } from '../storage/write-unit.ts';
import { decodeCursor, encodeCursor } from '../http/cursor.ts';
import { rolledOverKeys } from './child-key-rollover.ts';
import { resolveChildKeys } from './child-keys.ts';
import type { DelegationGrant, PreparedRegistry, RegisterRegistryInput, RegistryRecord, TrustAnchorInput } from './child-registry-types.ts';
import { childConstraints, signDelegationStatement, signStatusToken } from '../../contract/delegation-statement.ts';
import { checkChildTier } from './tier-policy.ts';

export * from './child-registry-types.ts';

export type ChildRegistriesDeps = {
  config: Config;
  storage: Storage;
  clock: Clock;
  signer: RegistrySigner;
  registryId: string;
  trustChain(): { delegationChain: string[]; statements: string[] };
  fetch?: typeof fetch;
};

export function createChildRegistries(deps: ChildRegistriesDeps) {
  const { config, storage, signer, registryId } = deps;
  const fetchImpl = deps.fetch ?? fetch;

  function record(row: RegistryRow): RegistryRecord {
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
      parent_id: registryId,
      delegation_chain: [...deps.trustChain().delegationChain, row.id],
      version: row.version,
      created_at: row.created_at,
      updated_at: row.updated_at,
    };
  }

  async function find(id: string): Promise<RegistryRow> {
    const row = await findRegistry(storage.db, id);
    if (!row) throw new WardError('REGISTRY_NOT_FOUND', undefined, { registry_id: id });
    return row;
  }

  return {
    /**
     * Checks a registration and resolves the child's keys, before any transaction: fetching keys
     * may take up to REGISTRY_FEDERATION_TIMEOUT_MS, and no write lock is held meanwhile.
     */
    async prepare(ctx: CallContext, input: RegisterRegistryInput): Promise<PreparedRegistry> {
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
      const { anchors, jwks } = await resolveChildKeys(input, now, { timeoutMs: config.REGISTRY_FEDERATION_TIMEOUT_MS, fetch: fetchImpl });
      return { input, jurisdiction, name, id: registryUri(jurisdiction, name), anchors, jwks };
    },

    /** Registers a prepared child; conflicts are checked inside the write unit, so two racing registrations cannot both win. */
    async register(unit: WriteUnit, ctx: CallContext, prepared: PreparedRegistry): Promise<RegistryRecord> {
      const { input, jurisdiction, name, id, anchors, jwks } = prepared;
      // A child named like this registry or one above it would speak as that registry.
      if (deps.trustChain().delegationChain.includes(id) || (await findRegistry(unit.tx, id))) {
        throw new WardError('REGISTRY_CONFLICT', 'A registry with this URI exists.', { registry_id: id });
      }
      if (input.tier === 'sovereign') {
        const existing = await findActiveSovereign(unit.tx, jurisdiction);
        if (existing) throw new WardError('REGISTRY_CONFLICT', `${jurisdiction} already has a sovereign registry.`, { registry_id: existing.id, jurisdiction });
      }
      const at = ctx.clock.now().toISOString();
      const row: RegistryRow = {
        id,
        name,
        display_name: input.display_name,
        jurisdiction,
        tier: input.tier,
        api_base_url: input.api_base_url ? input.api_base_url.replace(/\/+$/, '') : null,
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
      await insertRegistry(unit.tx, row);
      unit.emit({ type: 'registry.registered', subject: id, occurred_at: at, data: { registry_id: id, tier: row.tier, jurisdiction, display_name: row.display_name, parent_id: registryId } });
      return record(row);
    },

    async get(id: string): Promise<RegistryRecord> {
      return record(await find(id));
    },

    async list(filter: RegistryFilter, page: { cursor?: string; limit: number }) {
      const afterId = page.cursor === undefined ? undefined : decodeCursor(page.cursor, 'registries');
      const rows = await listRegistries(storage.db, filter, { limit: page.limit + 1, ...(afterId ? { afterId } : {}) });
      const shown = rows.slice(0, page.limit);
      const last = shown.at(-1);
      return { registries: shown.map(record), next_cursor: rows.length > page.limit && last ? encodeCursor('registries', last.id) : null };
    },

    /** Every active child (for federated discovery), read a page at a time in id order. */
    async activeChildren(): Promise<RegistryRow[]> {
      const pageSize = 500;
      const rows: RegistryRow[] = [];
      for (let afterId: string | undefined; ; ) {
        const page = await listRegistries(storage.db, { status: 'active' }, { limit: pageSize, ...(afterId ? { afterId } : {}) });
        rows.push(...page);
        if (page.length < pageSize) return rows;
        afterId = page.at(-1)?.id;
      }
    },

    async revoke(unit: WriteUnit, ctx: CallContext, id: string, reason: string): Promise<RegistryRecord> {
      const row = await findRegistry(unit.tx, id);
      if (!row) throw new WardError('REGISTRY_NOT_FOUND', undefined, { registry_id: id });
      if (row.status === 'revoked') throw new WardError('INVALID_STATE_TRANSITION', 'The registry is already revoked.', { registry_id: id, status: row.status });
      const at = ctx.clock.now().toISOString();
      const next: RegistryRow = { ...row, status: 'revoked', revoked_at: at, revocation_reason: reason, version: row.version + 1, updated_at: at };
      if (!(await updateRegistry(unit.tx, next, row.version))) throw new WardError('VERSION_CONFLICT', undefined, { registry_id: id });
      unit.emit({ type: 'registry.revoked', subject: id, occurred_at: at, data: { registry_id: id, reason, parent_id: registryId } });
      return record(next);
    },

    /**
     * A fresh delegation statement for an active child, with this registry's own chain above it. An
     * entity configuration presented by the child (signed by a key this registry holds for it) first
     * replaces the child's keys: that is how a child's key rotation reaches its statements.
     */
    async grant(id: string, entityConfiguration?: string): Promise<DelegationGrant> {
      let row = await find(id);
      if (row.status === 'revoked') throw new WardError('REGISTRY_REVOKED', undefined, { registry_id: id, reason: row.revocation_reason });
      const now = deps.clock.now();
      if (entityConfiguration) {
        // Signatures by several of the child's keys (space-separated); one by a key we hold is enough.
        // Only a change of keys is written: a replayed header with the same keys changes nothing, and
        // one with older keys is older than the iat recorded with the change.
        for (const jws of entityConfiguration.split(' ').slice(0, 10)) {
          const update = await rolledOverKeys(row, jws, now);
          if (!update) continue;
          if (!isDeepStrictEqual(update.keys, row.jwks.keys)) row = await replaceKeys(row, update, now);
          break;
        }
      }
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
    },

    /** Online status of a child, for verifiers (docs/federation.md "Status tokens"). */
    async status(id: string) {
      const row = await find(id);
      const status = row.status;
      return {
        sub: row.id,
        status,
        revoked_at: row.revoked_at,
        reason: row.revocation_reason,
        status_token: await signStatusToken(signer, { iss: registryId, sub: row.id, status, revoked_at: row.revoked_at }, deps.clock.now()),
      };
    },
  };

  /** Replaces the child's keys unless another instance changed the record since it was read. */
  async function replaceKeys(row: RegistryRow, update: { keys: Record<string, unknown>[]; iat: number }, now: Date): Promise<RegistryRow> {
    const at = now.toISOString();
    const { result } = await runWrite(storage, async (unit) => {
      const current = await findRegistry(unit.tx, row.id);
      if (!current || current.status !== 'active') throw new WardError('REGISTRY_REVOKED', undefined, { registry_id: row.id });
      if (current.version !== row.version || update.iat <= current.entity_iat) return current;
      const next: RegistryRow = { ...current, jwks: { keys: update.keys }, entity_iat: update.iat, version: current.version + 1, updated_at: at };
      if (!(await updateRegistry(unit.tx, next, current.version))) return current;
      // A child's rollover is a key rotation of that registry, as this registry records it.
      unit.emit({ type: 'trust.key_rotated', subject: row.id, occurred_at: at, data: { registry_id: row.id, kids: update.keys.map((key) => key.kid ?? null), source: 'entity_configuration' } });
      return next;
    });
    return result;
  }
}

export type ChildRegistries = ReturnType<typeof createChildRegistries>;


function slug(displayName: string): string {
  return displayName
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
}
