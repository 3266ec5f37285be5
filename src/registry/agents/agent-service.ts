import type { CallContext } from '../../core/call-context.ts';
import type { Clock } from '../../core/clock.ts';
import { WardError } from '../../core/errors.ts';
import { parseAgentId } from '../../core/ids.ts';
import type { Storage } from '../storage/database.ts';
import { countAgents, findAgent, findLiveAgentByOrgName, listAgentPage, type AgentFilter } from './storage/agent-store.ts';
import type { WriteUnit } from '../storage/write-unit.ts';
import { decodeCursor, encodeCursor } from '../../contract/cursor.ts';
import { parseIfMatch } from '../../contract/preconditions.ts';
import { writeOnce, type IdempotentOutcome, type WriteRequest } from '../storage/idempotency.ts';
import type { AgentInput } from './agent-document.ts';
import type { AgentRecord } from '../../contract/agent-record.ts';
import type { StatusAction } from '../../contract/agent-status.ts';
import { toAgentRecords, withHealth } from './agent-records.ts';
import { changeAgentStatus, registerAgent, updateAgent, type TrustContext } from './agent-writes.ts';
import type { EndpointUrlPolicy } from './endpoint-urls.ts';

export type { TrustContext } from './agent-writes.ts';

export type AgentServiceDeps = {
  storage: Storage;
  clock: Clock;
  trustContext: () => TrustContext;
  /** Which endpoint URLs a record may publish (endpoint-urls.ts). */
  endpointUrls: EndpointUrlPolicy;
};

export type AgentPage = { agents: AgentRecord[]; next_cursor: string | null; total_count: number };

/** The `If-Match` a caller sent (RFC 9110 §13.1.1): `*` or ETags; absent where it is optional. */
export type IfMatch = string | string[] | undefined;

/**
 * The agent lifecycle of contract §3. Each write comes two ways: `*Once` opens its own write unit,
 * at most once per idempotency key, and answers as the API does (the record and its ETag); the
 * plain methods run inside a caller's `WriteUnit`, for work that commits more in the same transaction.
 */
export function createAgentService(deps: AgentServiceDeps) {
  const { storage } = deps;
  const rules = { trustContext: deps.trustContext, endpointUrls: deps.endpointUrls };

  /**
   * A write to an existing record in its own unit, at most once per idempotency key: the precondition
   * runs before the unit and gives the version the write must still find; the answer is the record.
   */
  async function changeOnce(
    write: WriteRequest,
    precondition: () => Promise<number | '*'>,
    change: (unit: WriteUnit, expectedVersion: number | '*') => Promise<AgentRecord>,
  ): Promise<IdempotentOutcome> {
    let expectedVersion: number | '*' = '*';
    return writeOnce(
      deps,
      write,
      async (unit) => {
        const record = await change(unit, expectedVersion);
        return { status: 200, headers: recordHeaders(record), body: record };
      },
      async () => {
        expectedVersion = await precondition();
      },
    );
  }

  return {
    register: (unit: WriteUnit, ctx: CallContext, input: AgentInput & { jurisdiction: string }) => registerAgent(rules, unit, ctx, input),

    /**
     * Full replacement of the writable fields. `expectedVersion` is the version the caller's
     * precondition matched (or `*`); a different version now means a concurrent write won.
     */
    update: (unit: WriteUnit, ctx: CallContext, id: string, expectedVersion: number | '*', input: AgentInput) =>
      updateAgent(rules, unit, ctx, { id, expectedVersion, input }),

    /** `expectedVersion` is the version an If-Match matched, or `*` when the caller sent none. */
    changeStatus: (unit: WriteUnit, ctx: CallContext, id: string, action: StatusAction, reason: string | undefined, expectedVersion: number | '*' = '*') =>
      changeAgentStatus(unit, ctx, { id, action, reason, expectedVersion }),

    /** `POST /v1/agents`: the new record, 201 with its ETag and location. */
    async registerOnce(write: WriteRequest, input: AgentInput & { jurisdiction: string }): Promise<IdempotentOutcome> {
      return writeOnce(deps, write, async (unit) => {
        const record = await registerAgent(rules, unit, write.ctx, input);
        return { status: 201, headers: { ...recordHeaders(record), location: `/v1/agents/${record.agent_id.slice(record.agent_id.lastIndexOf('/') + 1)}` }, body: record };
      });
    },

    /** `PUT /v1/agents/{id}`: replaces the record `ref` names if it still matches `ifMatch`. */
    async updateOnce(write: WriteRequest, ref: string, ifMatch: IfMatch, input: AgentInput): Promise<IdempotentOutcome> {
      return changeOnce(
        write,
        () => checkPrecondition(storage.db, ref, ifMatch, false),
        (unit, expectedVersion) => updateAgent(rules, unit, write.ctx, { id: ulidOf(ref), expectedVersion, input }),
      );
    },

    /** `POST /v1/agents/{id}/{action}`: a status move; If-Match optional (when sent, it must match). */
    async changeStatusOnce(write: WriteRequest, ref: string, action: StatusAction, reason: string | undefined, ifMatch: IfMatch): Promise<IdempotentOutcome> {
      return changeOnce(
        write,
        () => checkPrecondition(storage.db, ref, ifMatch, true),
        (unit, expectedVersion) => changeAgentStatus(unit, write.ctx, { id: ulidOf(ref), action, reason, expectedVersion }),
      );
    },

    get: (id: string) => getAgent(storage.db, id),
    /** By `{id}` as the API takes it: a ULID, or a URI whose jurisdiction matches the record. */
    getByRef: (ref: string) => getAgentByRef(storage.db, ref),

    /** The live (not retired) agent of an organisation by its display name, if any. */
    async findLiveByOrgName(orgId: string, displayName: string): Promise<AgentRecord | undefined> {
      const row = await findLiveAgentByOrgName(storage.db, orgId, displayName);
      return row ? withHealth(storage.db, row) : undefined;
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

/** An agent's record by its ULID, with its endpoints' health. */
async function getAgent(db: Storage['db'], id: string): Promise<AgentRecord> {
  const row = await findAgent(db, id);
  if (!row) throw new WardError('AGENT_NOT_FOUND', undefined, { agent_id: id });
  return withHealth(db, row);
}

/** By `{id}` as the API takes it: a ULID, or a URI whose jurisdiction matches the record; anything else is not found. */
async function getAgentByRef(db: Storage['db'], ref: string): Promise<AgentRecord> {
  const record = await getAgent(db, ulidOf(ref));
  const parsed = parseAgentId(ref);
  if (parsed?.jurisdiction && parsed.jurisdiction !== record.jurisdiction) {
    throw new WardError('AGENT_NOT_FOUND', undefined, { agent_id: ref });
  }
  return record;
}

/**
 * Checks If-Match against the record as it is now and returns the version a write must still find;
 * a write that commits between this check and ours is caught inside the write as VERSION_CONFLICT.
 * Without an If-Match, where it is optional, any version will do, but the record must exist.
 */
async function checkPrecondition(db: Storage['db'], ref: string, ifMatch: IfMatch, optional: boolean): Promise<number | '*'> {
  if (optional && ifMatch === undefined) {
    await getAgentByRef(db, ref);
    return '*';
  }
  const condition = parseIfMatch(ifMatch);
  const current = await getAgentByRef(db, ref);
  if (condition !== '*' && !condition.includes(current.version)) {
    throw new WardError('PRECONDITION_FAILED', undefined, { current_etag: `"${current.version}"` });
  }
  return condition === '*' ? '*' : current.version;
}

/** An agent's ETag header: its version, quoted. */
export function recordHeaders(record: AgentRecord): { etag: string } {
  return { etag: `"${record.version}"` };
}

/** The ULID of an agent `{id}` (a ULID or a URI); one that is neither is not found. */
function ulidOf(ref: string): string {
  const parsed = parseAgentId(ref);
  if (!parsed) throw new WardError('AGENT_NOT_FOUND', undefined, { agent_id: ref });
  return parsed.ulid;
}
