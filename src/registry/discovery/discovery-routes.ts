import { WardError } from '../../core/errors.ts';
import { callContext } from '../http/request-context.ts';
import { normaliseJurisdiction } from '../../core/jurisdictions.ts';
import type { DiscoveryQuery } from './discovery-service.ts';
import { FEDERATION_BUDGET_HEADER } from './federated/federated-discovery.ts';
import { DiscoverQuery, DiscoveryResponseSchema } from '../../contract/schemas/discovery-schemas.ts';
import { errorResponses } from '../../contract/schemas/common.ts';
import { registryRoutePlugin } from '../http/route-plugin.ts';

const FEATURE = /^[a-z0-9][a-z0-9._+-]{0,63}$/;

/** `GET /v1/discover` (contract §4): the query checked, then the discovery answers' own (discovery-answers.ts). */
export const discoveryRoutes = registryRoutePlugin('ward-discovery-routes', async (app) => {
  const answers = app.ward.discoveryAnswers;

  app.get(
    '/v1/discover',
    {
      schema: {
        tags: ['discovery'],
        operationId: 'discoverAgents',
        summary: 'Discover agents by capability, jurisdiction and trust posture',
        description: 'Active, trust-validated agents offering a capability, ranked by trust level, health, jurisdiction and priority; signed, and federated to child registries on request (contract §4, docs/discovery.md).',
        querystring: DiscoverQuery,
        response: { 200: DiscoveryResponseSchema, ...errorResponses() },
      },
    },
    async (request, reply) => {
      const query = normaliseQuery(request.query);
      if (request.query.federated === true) return reply.send(await answers.federated(query, callContext(request), request.headers[FEDERATION_BUDGET_HEADER]));
      // Already the JSON bytes (cached or signed): sent as they are, past the response serialiser.
      reply.type('application/json; charset=utf-8');
      return reply.send((await answers.local(query)) as never);
    },
  );
});

/** Jurisdiction upper-case and checked, feature lists split on commas and checked, limit defaulted. */
function normaliseQuery(raw: {
  capability: string;
  jurisdiction?: string;
  require_features?: string[];
  protocol?: string;
  token_binding?: DiscoveryQuery['token_binding'];
  residency?: string;
  purpose_of_use?: DiscoveryQuery['purpose_of_use'];
  limit?: number;
}): DiscoveryQuery {
  const errors = [];
  const jurisdiction = raw.jurisdiction === undefined ? undefined : normaliseJurisdiction(raw.jurisdiction);
  if (raw.jurisdiction !== undefined && !jurisdiction) {
    errors.push({ in: 'query', pointer: '/jurisdiction', reason: 'must be an assigned ISO 3166-1 alpha-2 code' });
  }
  const features = [...new Set((raw.require_features ?? []).flatMap((f) => f.split(',')).map((f) => f.trim()).filter(Boolean))];
  features.forEach((feature, index) => {
    if (!FEATURE.test(feature)) errors.push({ in: 'query', pointer: `/require_features/${index}`, reason: 'must be a feature name' });
  });
  if (errors.length > 0) throw new WardError('VALIDATION_ERROR', 'The request failed validation.', { errors });
  return {
    capability: raw.capability,
    require_features: features,
    limit: raw.limit ?? 20,
    ...(jurisdiction ? { jurisdiction } : {}),
    ...(raw.protocol ? { protocol: raw.protocol } : {}),
    ...(raw.token_binding ? { token_binding: raw.token_binding } : {}),
    ...(raw.residency ? { residency: raw.residency } : {}),
    ...(raw.purpose_of_use ? { purpose_of_use: raw.purpose_of_use } : {}),
  };
}
