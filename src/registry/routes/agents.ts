import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { WardError } from '../../core/errors.ts';
import { parseAgentId } from '../../core/ids.ts';
import { normaliseJurisdiction } from '../../core/jurisdictions.ts';
import type { WriteUnit } from '../storage/write-unit.ts';
import type { AgentRecord } from '../../contract/agent-record.ts';
import { STATUS_ACTIONS, STATUS_ACTION_NAMES } from '../../contract/agent-status.ts';
import { executeIdempotent } from '../idempotency/idempotency.ts';
import { callContext, idempotentRequest, sendOutcome } from '../http/request-context.ts';
import { parseIfMatch } from '../http/preconditions.ts';
import {
  AgentIdParams,
  AgentListSchema,
  AgentRecordSchema,
  ListAgentsQuery,
  RegisterAgentBody,
  StatusChangeBody,
  UpdateAgentBody,
} from '../../contract/schemas/agent-schemas.ts';
import { IdempotencyHeaders, errorResponses } from '../../contract/schemas/common.ts';
import { registryRoutePlugin } from '../http/route-plugin.ts';

const IfMatchHeaders = Type.Object({
  ...IdempotencyHeaders.properties,
  'if-match': Type.Optional(Type.String({ description: 'The ETag of the last GET, or *' })),
});

/** Agents: contract §3. Every write is idempotent by key and versioned by ETag. */
export const agentRoutes = registryRoutePlugin('ward-agent-routes', async (app) => {
  const { agents, storage, clock } = app.ward;
  const writeDeps = { storage, clock };

  /** `{id}` as a ULID, or a URI whose jurisdiction matches the record; anything else is not found. */
  function resolveId(id: string): string {
    const parsed = parseAgentId(id);
    if (!parsed) throw new WardError('AGENT_NOT_FOUND', undefined, { agent_id: id });
    return parsed.ulid;
  }

  async function loadChecked(id: string): Promise<AgentRecord> {
    const record = await agents.get(resolveId(id));
    const parsed = parseAgentId(id);
    if (parsed?.jurisdiction && parsed.jurisdiction !== record.jurisdiction) {
      throw new WardError('AGENT_NOT_FOUND', undefined, { agent_id: id });
    }
    return record;
  }

  const recordHeaders = (record: AgentRecord) => ({ etag: `"${record.version}"` });

  /**
   * Checks If-Match against the record as it is now and returns the version a write must still find;
   * a write that commits between this check and ours is caught inside the write as VERSION_CONFLICT.
   */
  async function checkPrecondition(id: string, header: string | string[] | undefined): Promise<number | '*'> {
    const condition = parseIfMatch(header);
    const current = await loadChecked(id);
    if (condition !== '*' && !condition.includes(current.version)) {
      throw new WardError('PRECONDITION_FAILED', undefined, { current_etag: `"${current.version}"` });
    }
    return condition === '*' ? '*' : current.version;
  }

  /**
   * A write to an existing record, at most once per idempotency key: `check` runs before the write
   * unit and gives the version the write must still find ('*': any); the answer is the record and its ETag.
   */
  async function changeRecord(
    request: FastifyRequest,
    reply: FastifyReply,
    check: () => Promise<number | '*'>,
    change: (unit: WriteUnit, expectedVersion: number | '*') => Promise<AgentRecord>,
  ): Promise<FastifyReply> {
    let expectedVersion: number | '*' = '*';
    const outcome = await executeIdempotent(
      writeDeps,
      idempotentRequest(request),
      async (unit) => {
        const record = await change(unit, expectedVersion);
        return { status: 200, headers: recordHeaders(record), body: record };
      },
      async () => {
        expectedVersion = await check();
      },
    );
    return sendOutcome(reply, outcome);
  }

  const tags = ['agents'];

  app.post(
    '/v1/agents',
    {
      schema: {
        tags,
        summary: 'Register an agent',
        headers: IdempotencyHeaders,
        body: RegisterAgentBody,
        response: { 201: AgentRecordSchema, 200: AgentRecordSchema, ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      const outcome = await executeIdempotent(writeDeps, idempotentRequest(request), async (unit) => {
        const record = await agents.register(unit, callContext(request), request.body);
        const ulid = record.agent_id.slice(record.agent_id.lastIndexOf('/') + 1);
        return { status: 201, headers: { ...recordHeaders(record), location: `/v1/agents/${ulid}` }, body: record };
      });
      return sendOutcome(reply, outcome);
    },
  );

  app.get(
    '/v1/agents',
    {
      schema: {
        tags,
        summary: 'List agents',
        querystring: ListAgentsQuery,
        response: { 200: AgentListSchema, ...errorResponses() },
      },
    },
    async (request) => {
      const { jurisdiction, status, org_id: orgId, q, cursor, limit } = request.query;
      const filterJurisdiction = jurisdiction === undefined ? undefined : normaliseJurisdiction(jurisdiction);
      if (jurisdiction !== undefined && !filterJurisdiction) {
        throw new WardError('VALIDATION_ERROR', 'jurisdiction is not an ISO 3166-1 alpha-2 country code.', {
          errors: [{ in: 'query', pointer: '/jurisdiction', reason: 'must be an assigned ISO 3166-1 alpha-2 code' }],
        });
      }
      const searchedId = q === undefined ? undefined : parseAgentId(q.trim())?.ulid;
      return agents.list(
        {
          ...(filterJurisdiction ? { jurisdiction: filterJurisdiction } : {}),
          ...(status ? { status } : {}),
          ...(orgId ? { orgId } : {}),
          ...(q !== undefined ? { nameContains: q.trim() } : {}),
          ...(searchedId ? { id: searchedId } : {}),
        },
        { limit: limit ?? 20, ...(cursor ? { cursor } : {}) },
      );
    },
  );

  app.get(
    '/v1/agents/:id',
    {
      schema: {
        tags,
        summary: 'Get an agent',
        params: AgentIdParams,
        response: { 200: AgentRecordSchema, ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      const record = await loadChecked(request.params.id);
      return reply.headers(recordHeaders(record)).send(record);
    },
  );

  app.put(
    '/v1/agents/:id',
    {
      schema: {
        tags,
        summary: 'Replace an agent record',
        params: AgentIdParams,
        headers: IfMatchHeaders,
        body: UpdateAgentBody,
        response: { 200: AgentRecordSchema, ...errorResponses(404, 409, 412, 428) },
      },
      // The precondition before the body: a PUT without If-Match is 428 whatever its body holds,
      // so a client learns first that it must read the record (its ETag) before replacing it.
      preValidation: async (request) => {
        parseIfMatch(request.headers['if-match']);
      },
    },
    async (request, reply) =>
      changeRecord(
        request,
        reply,
        () => checkPrecondition(request.params.id, request.headers['if-match']),
        (unit, expectedVersion) => agents.update(unit, callContext(request), resolveId(request.params.id), expectedVersion, request.body),
      ),
  );

  for (const action of STATUS_ACTION_NAMES) {
    const rule = STATUS_ACTIONS[action];
    app.post(
      `/v1/agents/:id/${action}`,
      {
        schema: {
          tags,
          summary: `${action[0]?.toUpperCase()}${action.slice(1)} an agent (${rule.from.join(' | ')} → ${rule.to})`,
          description:
            'If-Match is optional here: when sent, a record changed since that ETag is refused with 412 rather than changed blindly (docs/api.md).',
          params: AgentIdParams,
          headers: IfMatchHeaders,
          body: Type.Optional(StatusChangeBody),
          response: { 200: AgentRecordSchema, ...errorResponses(404, 409, 412) },
        },
        // The body is optional for reinstate and retire: an absent one means "no reason".
        preValidation: async (request) => {
          request.body ??= {};
        },
      },
      async (request, reply) =>
        changeRecord(
          request,
          reply,
          async () => {
            if (request.headers['if-match'] !== undefined) return checkPrecondition(request.params.id, request.headers['if-match']);
            // Without If-Match any version will do, but the record must exist.
            await loadChecked(request.params.id);
            return '*';
          },
          (unit, expectedVersion) => agents.changeStatus(unit, callContext(request), resolveId(request.params.id), action, request.body?.reason, expectedVersion),
        ),
    );
  }
});
