import type { RateLimiter } from './rate-limiter.ts';
import type { UsageMeter } from './usage-meter.ts';
import { liveUsage, summariseUsage } from './usage-report.ts';
import { errorResponses } from '../../contract/schemas/common.ts';
import { KeyIdParams } from '../../contract/schemas/key-schemas.ts';
import { LiveUsageSchema, UsageSummaryQuery, UsageSummarySchema } from '../../contract/schemas/usage-schemas.ts';
import { registryRoutePlugin } from '../http/route-plugin.ts';

/** What the usage routes read: the meter (durable counts) and the limiter (live state). */
export type UsageRoutesOptions = { limiter: RateLimiter; meter: UsageMeter };

/** Usage summary and live usage under /v1/admin/billing (contract §7); both need registry:admin. */
export const usageRoutes = registryRoutePlugin<UsageRoutesOptions>('ward-usage-routes', async (app, options) => {
  const { apiKeys, storage, clock } = app.ward;
  const tags = ['billing'];

  app.get(
    '/v1/admin/billing/usage',
    {
      schema: {
        tags,
        operationId: 'getUsageSummary',
        summary: 'Usage per key, per UTC day and per operation class',
        description: 'Admitted and rate-limited requests per API key, per UTC day and per operation class, between two instants.',
        querystring: UsageSummaryQuery,
        response: { 200: UsageSummarySchema, ...errorResponses(401, 403) },
      },
    },
    async (request) => summariseUsage({ storage, meter: options.meter }, request.query),
  );

  app.get(
    '/v1/admin/billing/usage/:key_id/live',
    {
      schema: {
        tags,
        operationId: 'getLiveUsage',
        summary: "A key's live usage: today's count and limit, tokens left per bucket",
        description: 'An API key\'s usage now: today\'s request count against its daily limit, and the tokens left in each rate-limit bucket.',
        params: KeyIdParams,
        response: { 200: LiveUsageSchema, ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => liveUsage({ apiKeys, limiter: options.limiter }, request.params.key_id, clock.now()),
  );
});
