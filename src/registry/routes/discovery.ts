import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { CallContext } from '../../core/call-context.ts';
import { DISCOVERY_TYP } from '../../core/crypto/answer-types.ts';
import { WardError } from '../../core/errors.ts';
import { contextOf } from '../auth/authentication.ts';
import { normaliseJurisdiction } from '../../core/jurisdictions.ts';
import type { DiscoveryQuery, DiscoveryResult } from '../discovery/discovery-service.ts';
import { FEDERATION_BUDGET_HEADER, timeoutWithinBudget } from '../federation/federated-discovery.ts';
import { DiscoverQuery, DiscoveryResponseSchema } from '../schemas/discovery-schemas.ts';
import { errorResponses } from '../schemas/common.ts';

const FEATURE = /^[a-z0-9][a-z0-9._+-]{0,63}$/;

/** `GET /v1/discover` (contract §4). */
export const discoveryRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { discovery, signer, config, clock, discoveryCache: cache, eventHub } = app.ward;
  type Body = { query: DiscoveryQuery; results: DiscoveryResult[]; result_count: number };

  app.get(
    '/v1/discover',
    {
      schema: {
        tags: ['discovery'],
        summary: 'Discover agents by capability, jurisdiction and trust posture',
        querystring: DiscoverQuery,
        response: { 200: DiscoveryResponseSchema, ...errorResponses() },
      },
    },
    async (request, reply) => {
      const query = normaliseQuery(request.query);
      if (request.query.federated === true) return reply.send(await federated(query, contextOf(request), request.headers[FEDERATION_BUDGET_HEADER]));
      const key = JSON.stringify(query);
      const generation = eventHub.committedSeq();
      reply.type('application/json; charset=utf-8');
      const cached = cache.get(key, generation);
      if (cached) return reply.send(cached as never);
      const results = await discovery.discover(query);
      const body: Body = { query, results, result_count: results.length };
      // Serialised once: the signed payload is {...body, iss, iat} and the answer {...body,
      // signed_response}, each the body's JSON with members appended (the same bytes as
      // JSON.stringify of those objects, without serialising a large document three times).
      let text = JSON.stringify(body);
      if (config.REGISTRY_SIGN_RESPONSES) {
        const open = text.slice(0, -1);
        const signed = `${open},"iss":${JSON.stringify(app.ward.baseUrl())},"iat":${Math.floor(clock.now().getTime() / 1000)}}`;
        text = `${open},"signed_response":${JSON.stringify(await signer.signJson(signed, DISCOVERY_TYP))}}`;
      }
      const json = Buffer.from(text);
      cache.set(key, generation, json);
      return reply.send(json as never);
    },
  );

  /**
   * Contract §5: a root or sovereign registry also asks its children, for callers whose tier has
   * Federation = yes (and for parent registries and callers without a tier, e.g. auth disabled).
   * Not cached: the answer depends on other registries. A parent registry says how long it waits
   * (`ward-federation-budget-ms`); this registry then waits less for its own children, so that the
   * parent gets this registry's own agents even when a child further down is slow.
   */
  async function federated(query: DiscoveryQuery, ctx: CallContext, budget: string | string[] | undefined) {
    if (config.REGISTRY_TIER === 'organisational') {
      throw new WardError('TIER_VIOLATION', 'Federated discovery is offered by root and sovereign registries.', { tier: config.REGISTRY_TIER });
    }
    if (ctx.tier && !ctx.tier.limits.federation) {
      throw new WardError('TIER_FEATURE_UNAVAILABLE', `Federated discovery is not part of the ${ctx.tier.name} tier.`, { tier: ctx.tier.name, feature: 'federation' });
    }
    const local = await discovery.discover(query);
    const configured = config.REGISTRY_FEDERATION_TIMEOUT_MS;
    const timeoutMs = ctx.principal.kind === 'registry' ? timeoutWithinBudget(configured, budget) : configured;
    const answer = await app.ward.federatedDiscovery.discover(query, local, { timeoutMs });
    const federation = { partial: answer.children.some((child) => child.status !== 'ok' || child.partial === true), children: answer.children };
    const body = { query: { ...query, federated: true }, results: answer.results, result_count: answer.results.length, federation };
    if (!config.REGISTRY_SIGN_RESPONSES) return body;
    const signed = { ...body, iss: app.ward.baseUrl(), iat: Math.floor(clock.now().getTime() / 1000) };
    return { ...body, signed_response: await signer.sign(signed, DISCOVERY_TYP) };
  }
};

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
