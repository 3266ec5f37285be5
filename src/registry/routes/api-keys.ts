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
        summary: 'Create an API key (the raw key is in this answer only)',
        headers: IdempotencyHeaders,
        body: CreateApiKeyBody,
        response: { 201: CreatedApiKeySchema, 200: CreatedApiKeySchema, ...errorResponses(401, 403) },
      },
    },
    // Contract §2: the idempotency key is accepted but not required here.
    async (request, reply) => sendOutcome(reply, await apiKeys.createOnce(writeRequest(request, false), request.body)),
  );

  app.get(
    '/v1/admin/billing/api-keys',
    { schema: { tags, summary: 'List API keys', querystring: ListApiKeysQuery, response: { 200: ApiKeyListSchema, ...errorResponses(401, 403) } } },
    async (request) => {
      const { org_id, cursor, limit } = request.query;
      return apiKeys.list(org_id, { limit: limit ?? 20, ...(cursor ? { cursor } : {}) }, clock.now());
    },
  );

  app.get(
    '/v1/admin/billing/api-keys/:key_id',
    { schema: { tags, summary: 'Get an API key', params: KeyIdParams, response: { 200: ApiKeySchema, ...errorResponses(401, 403, 404) } } },
    async (request) => apiKeys.get(request.params.key_id, clock.now()),
  );

  app.delete(
    '/v1/admin/billing/api-keys/:key_id',
    { schema: { tags, summary: 'Revoke an API key (effective at once)', params: KeyIdParams, response: { ...errorResponses(401, 403, 404) } } },
    async (request, reply) => {
      await apiKeys.revokeOnce({ ctx: callContext(request) }, request.params.key_id);
      return reply.code(204).send();
    },
  );

  app.get(
    '/v1/admin/billing/tiers',
    { schema: { tags, summary: 'Pricing tiers and their limits', response: { 200: TiersSchema, ...errorResponses(401, 403) } } },
    async () => ({ tiers: PRICING_TIER_NAMES.map((name) => ({ name, ...PRICING_TIERS[name] })) }),
  );
});
