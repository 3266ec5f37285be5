import { Type } from 'typebox';
import { registryRoutePlugin } from '../http/route-plugin.ts';
import { PRICING_TIERS, PRICING_TIER_NAMES } from '../../core/pricing-tiers.ts';
import { callContext, sendOutcome, writeRequest } from '../http/request-context.ts';
import { errorResponses, IdempotencyHeaders } from '../../contract/schemas/common.ts';
import {
  ApiKeyListSchema,
  ApiKeySchema,
  CreateApiKeyBody,
  CreatedApiKeySchema,
  KeyIdParams,
  ListApiKeysQuery,
  TiersSchema,
} from '../../contract/schemas/key-schemas.ts';

/** API keys and pricing tiers under /v1/admin/billing (contract §7); every route needs registry:admin. */
export const apiKeyRoutes = registryRoutePlugin('ward-api-key-routes', async (app) => {
  const { apiKeys, clock } = app.ward;
  const tags = ['billing'];

  app.post(
    '/v1/admin/billing/api-keys',
    {
      schema: {
        tags,
        operationId: 'createApiKey',
        summary: 'Create an API key (the raw key is in this answer only)',
        description: 'Issues an API key for an organisation with a pricing tier, scopes and optional limits. The raw key is in this answer only: a replay omits it (contract §7).',
        headers: IdempotencyHeaders,
        body: CreateApiKeyBody,
        response: { 201: CreatedApiKeySchema, 200: CreatedApiKeySchema, ...errorResponses(401, 403, 409) },
      },
    },
    // Contract §2: the idempotency key is accepted but not required here.
    async (request, reply) => sendOutcome(reply, await apiKeys.createOnce(writeRequest(request, false), request.body)),
  );

  app.get(
    '/v1/admin/billing/api-keys',
    { schema: { tags, operationId: 'listApiKeys',
        summary: 'List API keys',
        description: 'API keys, optionally of one organisation, in pages; never the raw keys.', querystring: ListApiKeysQuery, response: { 200: ApiKeyListSchema, ...errorResponses(401, 403) } } },
    async (request) => {
      const { org_id, cursor, limit } = request.query;
      return apiKeys.list(org_id, { limit: limit ?? 20, ...(cursor ? { cursor } : {}) }, clock.now());
    },
  );

  app.get(
    '/v1/admin/billing/api-keys/:key_id',
    { schema: { tags, operationId: 'getApiKey',
        summary: 'Get an API key',
        description: 'One API key: its organisation, tier, scopes, limits and state; never the raw key.', params: KeyIdParams, response: { 200: ApiKeySchema, ...errorResponses(401, 403, 404) } } },
    async (request) => apiKeys.get(request.params.key_id, clock.now()),
  );

  app.delete(
    '/v1/admin/billing/api-keys/:key_id',
    {
      schema: {
        tags,
        operationId: 'revokeApiKey',
        summary: 'Revoke an API key (effective at once)',
        description: 'Revokes an API key: every instance refuses it from the next request on.',
        params: KeyIdParams,
        response: { 204: Type.Null({ description: 'Revoked; no body' }), ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      await apiKeys.revokeOnce({ ctx: callContext(request) }, request.params.key_id);
      // A 204 has no body: Fastify drops the payload whatever it is.
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/v1/admin/billing/tiers',
    { schema: { tags, operationId: 'listPricingTiers',
        summary: 'Pricing tiers and their limits',
        description: 'Each pricing tier with its request, agent, discovery and routing limits and what it includes (contract §7).', response: { 200: TiersSchema, ...errorResponses(401, 403) } } },
    async () => ({ tiers: PRICING_TIER_NAMES.map((name) => ({ name, ...PRICING_TIERS[name] })) }),
  );
});
