import { WardError } from '../../../core/errors.ts';
import { normaliseJurisdiction } from '../../../core/jurisdictions.ts';
import { refuseIfRevoked } from '../../federation/index.ts';
import { callContext } from '../../http/request-context.ts';
import { RouteBody, RoutingResponseSchema } from '../../../contract/schemas/discovery-schemas.ts';
import { errorResponses } from '../../../contract/schemas/common.ts';
import { registryRoutePlugin } from '../../http/route-plugin.ts';

/**
 * `POST /v1/route` (contract §4). It changes nothing, so it needs no idempotency key and ignores one.
 * The weighted choice among equal endpoints is seeded by the request id: send the same X-Request-Id to
 * get the same answer.
 */
export const routingRoutes = registryRoutePlugin('ward-routing-routes', async (app) => {
  app.post(
    '/v1/route',
    {
      schema: {
        tags: ['routing'],
        operationId: 'routeAdvice',
        summary: 'Routing advice for an agent or a capability',
        description: 'Chooses the endpoint to call for an agent (or the best agent for a capability) under residency, protocol and purpose constraints, with its trust bundle; signed, and changes nothing (contract §4).',
        body: RouteBody,
        response: { 200: RoutingResponseSchema, ...errorResponses(403, 404, 409) },
      },
    },
    async (request, reply) => {
      refuseIfRevoked(app.ward);
      // `target_agent_id` (the spec's name, the MCP tool's) is accepted as `target` (the contract's).
      const { target_agent_id: targetAgentId, ...rest } = request.body;
      const body = { ...rest, ...(targetAgentId !== undefined ? { target: targetAgentId } : {}) };
      const errors = [];
      if (targetAgentId !== undefined && rest.target !== undefined) {
        errors.push({ in: 'body', pointer: '/target_agent_id', reason: 'send target or target_agent_id, not both' });
      } else if ((body.target === undefined) === (body.capability === undefined)) {
        errors.push({ in: 'body', pointer: '', reason: 'exactly one of target (or target_agent_id) or capability is required' });
      }
      const jurisdictions: Record<string, string | undefined> = {};
      for (const field of ['jurisdiction', 'caller_jurisdiction'] as const) {
        const value = body[field];
        if (value === undefined) continue;
        jurisdictions[field] = normaliseJurisdiction(value);
        if (!jurisdictions[field]) errors.push({ in: 'body', pointer: `/${field}`, reason: 'must be an assigned ISO 3166-1 alpha-2 code' });
      }
      if (errors.length > 0) throw new WardError('VALIDATION_ERROR', 'The request failed validation.', { errors });
      const advice = await app.ward.routing.route(callContext(request), { ...body, ...jurisdictions });
      // Already the JSON bytes (signed over them): sent as they are, past the response serialiser.
      reply.type('application/json; charset=utf-8');
      return reply.send(advice as never);
    },
  );
});
