import type { CallContext } from '../../core/call-context.ts';
import { WardError } from '../../core/errors.ts';
import { agentUri, newUlid } from '../../core/ids.ts';
import { normaliseJurisdiction } from '../../core/jurisdictions.ts';
import type { Storage } from '../storage/database.ts';
import {
  countAgents,
  countOrgAgents,
  findAgent,
  hasNameConflict,
  insertAgent,
  listAgentPage,
  replaceAgent,
  replaceSkills,
  type AgentFilter,
  type AgentRow,
} from '../storage/stores/agent-store.ts';
import {
  clearEndpointHealth,
  listEndpointHealth,
  type EndpointHealthRow,
} from '../storage/stores/endpoint-health-store.ts';
import type { WriteUnit } from '../storage/write-unit.ts';
import type { EventType } from '../../contract/event-types.ts';
import { validateTrustMaterial } from '../trust/trust-validation.ts';
import { decodeCursor, encodeCursor } from '../http/cursor.ts';
import { toAgentDocument, type AgentInput } from './agent-document.ts';
import type { AgentDocument, AgentRecord, AgentStatus, TrustValidation } from '../../contract/agent-record.ts';
import { STATUS_ACTIONS, isMutable, nextStatus, type StatusAction } from '../../contract/agent-status.ts';

/** Keys and issuers trust validation may rely on; supplied by the registry at call time. */
export type TrustContext = {
  registryJwks: { keys: Record<string, unknown>[] };
  knownIssuers: ReadonlyArray<{ iss: string; jwks: { keys: Record<string, unknown>[] } }>;
};

export type AgentServiceDeps = {
  storage: Storage;
  trustContext: () => TrustContext;
};

/**
 * The organisation a non-administrator writes for (contract §7; docs/auth-modes.md "Organisations"):
 * an API key's `org_id`, or a token's `org_id` claim. A credential without one writes no agent, so a
 * token minted without the claim cannot reach across organisations by saying nothing.
 */
function requireCallerOrg(ctx: CallContext): string {
  const orgId = ctx.principal.orgId;
  if (!orgId) throw new WardError('ORG_REQUIRED', 'This credential names no organisation (the token has no org_id claim), so it cannot write agents.');
  return orgId;
}

/** What the JSON document column holds besides the owner's document. */
type StoredDocument = AgentDocument & { trust_validation: TrustValidation; status_reason: string | null };

export type AgentPage = { agents: AgentRecord[]; next_cursor: string | null; total_count: number };

/**
 * The agent lifecycle of contract §3. Write methods run inside a caller-supplied `WriteUnit` so the
 * caller can commit its own bookkeeping (the idempotency record) in the same transaction.
 */
export function createAgentService(deps: AgentServiceDeps) {
  const { storage } = deps;

  async function validate(document: AgentDocument, binding: { agent_id: string; jurisdiction: string }, now: Date) {
    const context = deps.trustContext();
    const result = await validateTrustMaterial({
      trust: document.trust,
      binding: {
        agent_id: binding.agent_id,
        display_name: document.display_name,
        jurisdiction: binding.jurisdiction,
        ...(document.owner.org_id ? { org_id: document.owner.org_id } : {}),
      },
      knownIssuers: context.knownIssuers,
      registryJwks: context.registryJwks,
      now,
    });
    return { state: result.state, level: result.level, checked_at: result.checked_at, errors: result.errors, expires_at: result.expires_at } satisfies TrustValidation;
  }

  function emit(unit: WriteUnit, type: EventType, row: AgentRow, data: Record<string, unknown>, at: string) {
    unit.emit({ type, subject: row.agent_uri, occurred_at: at, data: { agent_id: row.agent_uri, version: row.version, ...data } });
  }

  function emitTrustOutcome(unit: WriteUnit, row: AgentRow, trust: TrustValidation, at: string) {
    if (trust.state === 'validated') emit(unit, 'agent.trust_validated', row, { level: trust.level }, at);
    else emit(unit, 'agent.trust_failed', row, { error_codes: trust.errors.map((e) => e.code) }, at);
  }

  function nameConflict(document: AgentDocument): WardError {
    return new WardError('AGENT_CONFLICT', undefined, { org_id: document.owner.org_id, display_name: document.display_name });
  }

  async function assertNoNameConflict(unit: WriteUnit, document: AgentDocument, exceptId?: string) {
    const orgId = document.owner.org_id;
    if (orgId && (await hasNameConflict(unit.tx, orgId, document.display_name, exceptId))) throw nameConflict(document);
  }

  async function loadMutable(unit: WriteUnit, ctx: CallContext, id: string): Promise<AgentRow> {
    const row = await findAgent(unit.tx, id);
    if (!row) throw new WardError('AGENT_NOT_FOUND', undefined, { agent_id: id });
    if (ctx.scopes.has('registry:admin')) return row;
    if (requireCallerOrg(ctx) !== row.org_id) throw new WardError('ORG_MISMATCH', undefined, { org_id: row.org_id });
    return row;
  }

  /**
   * Contract §7: an agent registered with an organisation's key belongs to that organisation
   * (`owner.org_id` defaults to it; another one is refused), within its tier's agent limit.
   */
  async function claimForCaller(unit: WriteUnit, ctx: CallContext, input: AgentInput): Promise<AgentInput> {
    const orgId = ctx.scopes.has('registry:admin') ? ctx.principal.orgId : requireCallerOrg(ctx);
    if (!orgId) return input;
    if (input.owner?.org_id !== undefined && input.owner.org_id !== orgId) {
      throw new WardError('ORG_MISMATCH', "An organisation's key registers agents for that organisation only.", { org_id: orgId });
    }
    const max = ctx.pricingTier?.limits.max_agents;
    if (max !== null && max !== undefined && (await countOrgAgents(unit.tx, orgId)) >= max) {
      throw new WardError('TIER_LIMIT_EXCEEDED', undefined, { max_agents: max, tier: ctx.pricingTier?.name });
    }
    return { ...input, owner: { ...(input.owner ?? {}), org_id: orgId } };
  }

  return {
    async register(unit: WriteUnit, ctx: CallContext, input: AgentInput & { jurisdiction: string }): Promise<AgentRecord> {
      const jurisdiction = normaliseJurisdiction(input.jurisdiction);
      if (!jurisdiction) throw invalidJurisdiction();
      const now = ctx.clock.now();
      const at = now.toISOString();
      const document = toAgentDocument(await claimForCaller(unit, ctx, input));
      const id = newUlid(now.getTime());
      const uri = agentUri(jurisdiction, id);
      const trust = await validate(document, { agent_id: uri, jurisdiction }, now);
      const row = buildRow(
        { id, uri, jurisdiction, status: 'active', version: 1, created_at: at, updated_at: at, health_rank: UNKNOWN_RANK },
        { ...document, trust_validation: trust, status_reason: null },
      );
      // The name check is the insert's own (a unique index): no read first, one statement in the lock.
      if (!(await insertAgent(unit.tx, row, document.capabilities.skills))) throw nameConflict(document);
      emit(unit, 'agent.registered', row, { status: row.status, jurisdiction, display_name: document.display_name }, at);
      emitTrustOutcome(unit, row, trust, at);
      return toAgentRecord(row, []);
    },

    /**
     * Full replacement of the writable fields. `expectedVersion` is the version the caller's
     * precondition matched (or `*`); a different version now means a concurrent write won.
     */
    async update(unit: WriteUnit, ctx: CallContext, id: string, expectedVersion: number | '*', input: AgentInput): Promise<AgentRecord> {
      const current = await loadMutable(unit, ctx, id);
      if (!isMutable(current.status as AgentStatus)) {
        throw new WardError('AGENT_NOT_MUTABLE', undefined, { agent_id: current.agent_uri, status: current.status });
      }
      if (expectedVersion !== '*' && current.version !== expectedVersion) {
        throw new WardError('VERSION_CONFLICT', undefined, { agent_id: current.agent_uri, current_version: current.version });
      }
      const previous = current.record as StoredDocument;
      const document = toAgentDocument(input, previous.owner);
      if ((previous.owner.org_id ?? null) !== (document.owner.org_id ?? null)) {
        throw new WardError('VALIDATION_ERROR', 'The owning organisation of an agent cannot change.', {
          errors: [{ in: 'body', pointer: '/owner/org_id', reason: 'must equal the current owner.org_id' }],
        });
      }
      await assertNoNameConflict(unit, document, current.id);
      const now = ctx.clock.now();
      const at = now.toISOString();
      const trust = await validate(document, { agent_id: current.agent_uri, jurisdiction: current.jurisdiction }, now);
      // New endpoints make the old health readings meaningless: back to unknown until probed.
      const row = buildRow(
        { ...current, uri: current.agent_uri, version: current.version + 1, updated_at: at, health_rank: UNKNOWN_RANK },
        { ...document, trust_validation: trust, status_reason: previous.status_reason },
      );
      if (!(await replaceAgent(unit.tx, row, current.version))) {
        throw new WardError('VERSION_CONFLICT', undefined, { agent_id: current.agent_uri });
      }
      await replaceSkills(unit.tx, row, document.capabilities.skills);
      await clearEndpointHealth(unit.tx, row.id);
      emit(unit, 'agent.updated', row, { status: row.status, display_name: document.display_name }, at);
      emitTrustOutcome(unit, row, trust, at);
      return toAgentRecord(row, []);
    },

    /** `expectedVersion` is the version an If-Match matched, or `*` when the caller sent none. */
    async changeStatus(
      unit: WriteUnit,
      ctx: CallContext,
      id: string,
      action: StatusAction,
      reason: string | undefined,
      expectedVersion: number | '*' = '*',
    ): Promise<AgentRecord> {
      const rule = STATUS_ACTIONS[action];
      if (rule.reasonRequired && !reason) {
        throw new WardError('VALIDATION_ERROR', `A reason is required to ${action} an agent.`, {
          errors: [{ in: 'body', pointer: '/reason', reason: 'is required' }],
        });
      }
      const current = await loadMutable(unit, ctx, id);
      if (expectedVersion !== '*' && current.version !== expectedVersion) {
        throw new WardError('VERSION_CONFLICT', undefined, { agent_id: current.agent_uri, current_version: current.version });
      }
      const from = current.status as AgentStatus;
      const to = nextStatus(from, action);
      if (!to) throw new WardError('INVALID_STATE_TRANSITION', `An agent that is ${from} cannot be ${action}d.`, { from, action });
      const at = ctx.clock.now().toISOString();
      const previous = current.record as StoredDocument;
      const row = buildRow(
        { ...current, uri: current.agent_uri, status: to, version: current.version + 1, updated_at: at },
        { ...previous, status_reason: reason ?? null },
      );
      if (!(await replaceAgent(unit.tx, row, current.version))) {
        throw new WardError('VERSION_CONFLICT', undefined, { agent_id: current.agent_uri });
      }
      emit(unit, rule.event, row, { from, to, reason: reason ?? null }, at);
      return withHealth(unit.tx, row);
    },

    async get(id: string): Promise<AgentRecord> {
      const row = await findAgent(storage.db, id);
      if (!row) throw new WardError('AGENT_NOT_FOUND', undefined, { agent_id: id });
      return withHealth(storage.db, row);
    },

    async list(filter: AgentFilter, page: { cursor?: string; limit: number }): Promise<AgentPage> {
      const afterId = page.cursor === undefined ? undefined : decodeCursor(page.cursor, 'agents');
      // One row more than asked tells whether another page follows without a second query.
      const rows = await listAgentPage(storage.db, filter, { limit: page.limit + 1, ...(afterId ? { afterId } : {}) });
      const pageRows = rows.slice(0, page.limit);
      const last = pageRows.at(-1);
      return {
        agents: await toAgentRecords(storage.db, pageRows),
        next_cursor: rows.length > page.limit && last ? encodeCursor('agents', last.id) : null,
        total_count: await countAgents(storage.db, filter),
      };
    },
  };
}

export type AgentService = ReturnType<typeof createAgentService>;

function invalidJurisdiction(): WardError {
  return new WardError('VALIDATION_ERROR', 'jurisdiction is not an ISO 3166-1 alpha-2 country code.', {
    errors: [{ in: 'body', pointer: '/jurisdiction', reason: 'must be an assigned ISO 3166-1 alpha-2 code' }],
  });
}

/** Health ranks as stored: the best reading among an agent's endpoints. */
export const HEALTH_RANKS = { healthy: 2, unknown: 1, unhealthy: 0 } as const;
const UNKNOWN_RANK = HEALTH_RANKS.unknown;

function buildRow(
  meta: {
    id: string;
    uri: string;
    jurisdiction: string;
    status: string;
    version: number;
    created_at: string;
    updated_at: string;
    health_rank: number;
  },
  document: StoredDocument,
): AgentRow {
  return {
    id: meta.id,
    agent_uri: meta.uri,
    jurisdiction: meta.jurisdiction,
    status: meta.status,
    display_name: document.display_name,
    org_id: document.owner.org_id ?? null,
    version: meta.version,
    trust_state: document.trust_validation.state,
    trust_level: document.trust_validation.level,
    token_binding: document.capabilities.token_binding,
    best_priority: Math.min(...document.endpoints.map((endpoint) => endpoint.priority)),
    health_rank: meta.health_rank,
    trust_expires_at: document.trust_validation.expires_at ?? null,
    endpoint_count: document.endpoints.length,
    record: document,
    created_at: meta.created_at,
    updated_at: meta.updated_at,
  };
}

/** Records for rows, each with its endpoints' latest health readings (one query for all). */
export async function toAgentRecords(db: Storage['db'], rows: readonly AgentRow[]): Promise<AgentRecord[]> {
  const health = await listEndpointHealth(db, rows.map((row) => row.id));
  return rows.map((row) => toAgentRecord(row, health.get(row.id) ?? []));
}

async function withHealth(db: Storage['db'], row: AgentRow): Promise<AgentRecord> {
  const [record] = await toAgentRecords(db, [row]);
  return record as AgentRecord;
}

/**
 * The row as the API returns it. An endpoint without a reading whose URL matches is `unknown`
 * (never probed, or its address changed since).
 */
export function toAgentRecord(row: AgentRow, readings: readonly EndpointHealthRow[]): AgentRecord {
  const document = row.record as StoredDocument;
  return {
    agent_id: row.agent_uri,
    display_name: document.display_name,
    jurisdiction: row.jurisdiction,
    status: row.status as AgentStatus,
    status_reason: document.status_reason,
    endpoints: document.endpoints.map((endpoint, index) => {
      const reading = readings.find((r) => r.endpoint_index === index && r.url === endpoint.url);
      return {
        ...endpoint,
        health: reading
          ? { status: reading.status, checked_at: reading.checked_at, latency_ms: reading.latency_ms, reason: reading.reason }
          : { status: 'unknown' as const, checked_at: null, latency_ms: null, reason: null },
      };
    }),
    capabilities: document.capabilities,
    trust: document.trust,
    owner: document.owner,
    description: document.description,
    policy_tags: document.policy_tags,
    version: row.version,
    trust_validation: document.trust_validation,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
