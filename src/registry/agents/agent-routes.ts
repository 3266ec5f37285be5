import { Type } from 'typebox';
import { WardError } from '../../core/errors.ts';
import { parseAgentId } from '../../core/ids.ts';
import { normaliseJurisdiction } from '../../core/jurisdictions.ts';
import { STATUS_ACTIONS, STATUS_ACTION_NAMES } from '../../contract/agent-status.ts';
import { recordHeaders } from './agent-service.ts';
import { sendOutcome, writeRequest } from '../http/request-context.ts';
import { parseIfMatch } from '../../contract/preconditions.ts';
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

/** The schema of `POST /v1/agents/{id}/{action}`: one operation per status action. */
function statusActionSchema(action: (typeof STATUS_ACTION_NAMES)[number]) {
  const rule = STATUS_ACTIONS[action];
  return {
    tags: ['agents'],
    operationId: `${action}Agent`,
    summary: `${action[0]?.toUpperCase()}${action.slice(1)} an agent (${rule.from.join(' | ')} → ${rule.to})`,
    description:
      `Moves the agent to ${rule.to} and records the reason as status_reason; the version goes up by one. ` +
      'If-Match is optional here: when sent, a record changed since that ETag is refused with 412 rather than changed blindly (docs/api.md).',
    params: AgentIdParams,
    headers: IfMatchHeaders,
    body: Type.Optional(StatusChangeBody),
    response: { 200: AgentRecordSchema, ...errorResponses(404, 409, 412) },
  };
}

/** Agents: contract §3. Every write is idempotent by key and versioned by ETag. */
export const agentRoutes = registryRoutePlugin('ward-agent-routes', async (app) => {
  const { agents } = app.ward;
  const tags = ['agents'];

  app.post(
    '/v1/agents',
    {
      schema: {
        tags,
        operationId: 'registerAgent',
        summary: 'Register an agent',
        description: 'Registers an agent under this registry: its endpoints, capabilities, trust material, owner and policy tags. Answers 201 with the record, its Location and ETag "1"; trust validation follows (docs/api.md).',
        headers: IdempotencyHeaders,
        body: RegisterAgentBody,
        response: { 201: AgentRecordSchema, 200: AgentRecordSchema, ...errorResponses(409) },
      },
    },
    async (request, reply) => sendOutcome(reply, await agents.registerOnce(writeRequest(request), request.body)),
  );

  app.get(
    '/v1/agents',
    {
      schema: {
        tags,
        operationId: 'listAgents',
        summary: 'List agents',
        description: 'Agent records in creation order, filtered by jurisdiction, status, organisation or name text, in pages with a total count.',
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
        operationId: 'getAgent',
        summary: 'Get an agent',
        description: 'One agent record by its ULID or its percent-encoded agent URI, with its version as the ETag.',
        params: AgentIdParams,
        response: { 200: AgentRecordSchema, ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      const record = await agents.getByRef(request.params.id);
      return reply.headers(recordHeaders(record)).send(record);
    },
  );

  app.put(
    '/v1/agents/:id',
    {
      schema: {
        tags,
        operationId: 'replaceAgent',
        summary: 'Replace an agent record',
        description: 'A full replacement of the writable fields. Needs If-Match with the ETag of the last GET (428 without it, 412 when it no longer matches); the version goes up by one.',
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
      sendOutcome(reply, await agents.updateOnce(writeRequest(request), request.params.id, request.headers['if-match'], request.body)),
  );

  for (const action of STATUS_ACTION_NAMES) {
    app.post(
      `/v1/agents/:id/${action}`,
      {
        schema: statusActionSchema(action),
        // The body is optional for reinstate and retire: an absent one means "no reason".
        preValidation: async (request) => {
          request.body ??= {};
        },
      },
      async (request, reply) =>
        sendOutcome(
          reply,
          await agents.changeStatusOnce(writeRequest(request), request.params.id, action, request.body?.reason, request.headers['if-match']),
        ),
    );
  }
});
