/**
 * The answers of `GET /v1/discover` without Fastify (contract §4, §5): the local answer, serialised
 * once and, with REGISTRY_SIGN_RESPONSES, signed; and the federated answer behind its access policy
 * (root and sovereign registries only, callers whose tier includes federation), signed likewise.
 * The local answer is cached here, as the bytes sent, until anything is committed (the event
 * sequence moves) or 30 s pass. The route only binds these to HTTP.
 */
import type { CallContext } from '../../core/call-context.ts';
import type { Clock } from '../../core/clock.ts';
import type { Config } from '../../core/config.ts';
import { DISCOVERY_TYP } from '../../core/crypto/answer-types.ts';
import { withCompactJws, withMembers } from '../../core/crypto/json-members.ts';
import type { RegistrySigner } from '../signing-keys/index.ts';
import { WardError } from '../../core/errors.ts';
import { timeoutWithinBudget, type FederatedDiscovery } from './federated/federated-discovery.ts';
import { createResponseCache } from './response-cache.ts';
import type { DiscoveryQuery, DiscoveryResult, DiscoveryService } from './discovery-service.ts';

export type DiscoveryAnswerDeps = {
  readonly config: Pick<Config, 'REGISTRY_SIGN_RESPONSES' | 'REGISTRY_TIER' | 'REGISTRY_FEDERATION_TIMEOUT_MS' | 'REGISTRY_DISCOVERY_CACHE_ENTRIES'>;
  readonly discovery: DiscoveryService;
  readonly federatedDiscovery: FederatedDiscovery;
  readonly signer: RegistrySigner;
  readonly clock: Clock;
  /** The registry's public base URL, the signed answers' `iss`. */
  baseUrl(): string;
  /** The sequence of the last change this instance knows is committed, on any instance: a cached answer is valid while it holds. */
  committedSeq(): number;
};

/** Bounds how old the health readings inside a cached answer can be. */
const CACHE_MAX_AGE_MS = 30_000;

type LocalBody = { query: DiscoveryQuery; results: DiscoveryResult[]; result_count: number };

export function createDiscoveryAnswers(deps: DiscoveryAnswerDeps) {
  const { config, discovery, signer, clock } = deps;
  const issuedAt = () => Math.floor(clock.now().getTime() / 1000);
  // Encoded bytes: a hit then costs neither serialising nor UTF-8 encoding a large document again
  // (measured: encoding alone was 45 % of a cache hit's CPU).
  const cache = createResponseCache<Buffer>({
    maxEntries: config.REGISTRY_DISCOVERY_CACHE_ENTRIES,
    maxAgeMs: CACHE_MAX_AGE_MS,
    now: () => clock.now().getTime(),
  });

  /** The answer computed afresh: serialised once and, with REGISTRY_SIGN_RESPONSES, signed. */
  async function answer(query: DiscoveryQuery): Promise<Buffer> {
    const results = await discovery.discover(query);
    const body: LocalBody = { query, results, result_count: results.length };
    // Serialised once: the signed payload is {...body, iss, iat} and the answer {...body, signed_response}.
    const bytes = Buffer.from(JSON.stringify(body));
    if (!config.REGISTRY_SIGN_RESPONSES) return bytes;
    const signed = await signer.signJson(withMembers(bytes, { iss: deps.baseUrl(), iat: issuedAt() }), DISCOVERY_TYP);
    return withCompactJws(bytes, 'signed_response', signed);
  }

  return {
    /** This registry's own answer to `query`, as the JSON bytes to send: from the cache while nothing changed. */
    async local(query: DiscoveryQuery): Promise<Buffer> {
      const key = JSON.stringify(query);
      const generation = deps.committedSeq();
      const cached = cache.get(key, generation);
      if (cached) return cached;
      const fresh = await answer(query);
      cache.set(key, generation, fresh);
      return fresh;
    },

    /** Lookups since start and the cache's size: the diagnostics page's hit ratio and the metrics. */
    cacheStats: () => cache.stats(),

    /**
     * Contract §5: a root or sovereign registry also asks its children, for callers whose tier has
     * Federation = yes (and for parent registries and callers without a tier, e.g. auth disabled).
     * Not cached: the answer depends on other registries. A parent registry says how long it waits
     * (`budget`, the `ward-federation-budget-ms` header); this registry then waits less for its own
     * children, so that the parent gets this registry's own agents even when a child further down is slow.
     */
    async federated(query: DiscoveryQuery, ctx: CallContext, budget: string | string[] | undefined) {
      if (config.REGISTRY_TIER === 'organisational') {
        throw new WardError('TIER_VIOLATION', 'Federated discovery is offered by root and sovereign registries.', { tier: config.REGISTRY_TIER });
      }
      if (ctx.pricingTier && !ctx.pricingTier.limits.federation) {
        throw new WardError('TIER_FEATURE_UNAVAILABLE', `Federated discovery is not part of the ${ctx.pricingTier.name} tier.`, { tier: ctx.pricingTier.name, feature: 'federation' });
      }
      const local = await discovery.discover(query);
      const configured = config.REGISTRY_FEDERATION_TIMEOUT_MS;
      const timeoutMs = ctx.principal.kind === 'registry' ? timeoutWithinBudget(configured, budget) : configured;
      const answer = await deps.federatedDiscovery.discover(query, local, { timeoutMs });
      const federation = { partial: answer.children.some((child) => child.status !== 'ok' || child.partial === true), children: answer.children };
      const body = { query: { ...query, federated: true }, results: answer.results, result_count: answer.results.length, federation };
      if (!config.REGISTRY_SIGN_RESPONSES) return body;
      const signed = { ...body, iss: deps.baseUrl(), iat: issuedAt() };
      return { ...body, signed_response: await signer.sign(signed, DISCOVERY_TYP) };
    },
  };
}

export type DiscoveryAnswers = ReturnType<typeof createDiscoveryAnswers>;
