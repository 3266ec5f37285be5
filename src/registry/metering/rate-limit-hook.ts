import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Clock } from '../../core/clock.ts';
import { WardError } from '../../core/errors.ts';
import type { PricingTierLimits } from '../../core/pricing-tiers.ts';
import type { UsageMeter } from './usage-meter.ts';
import { bucketOf, decide, limitRequestFor, type LimitDecision } from './limit-policy.ts';
import type { LimitRequest, RateLimiter } from './rate-limiter.ts';
import { utcDay } from './utc-day.ts';

/** How soon a client may try again after the limiter could not be reached. */
const UNAVAILABLE_RETRY_MS = 1000;

/** The federation routes other registries call without an API key (docs/federation.md). */
const PUBLIC_FEDERATION_ROUTES = new Set(['/v1/federation/fetch', '/v1/federation/status', '/.well-known/openid-federation', '/v1/oidf/fetch', '/v1/oidf/list', '/v1/oidf/resolve', '/v1/oidf/trust-mark', '/v1/oidf/trust-mark-list', '/v1/oidf/trust-mark-status']);

/** The limits a caller's address has on the public federation routes: one per-minute bucket. */
function federationLimits(perMinute: number): PricingTierLimits {
  return {
    requests_per_minute: perMinute,
    requests_per_day: null,
    max_agents: null,
    discovery_per_minute: null,
    routing_per_minute: null,
    federation: true,
    events_sse: false,
    sla: null,
  };
}

/**
 * Rate limits and usage metering for every request of an API key (contract §7). An `onRequest`
 * hook registered right after authentication, so the caller (key id, organisation, tier) is known,
 * and a refused request costs no body parsing, no PHI scan and no database work beyond the key.
 * - Callers without a tier (anonymous in `disabled` mode, token callers) are neither limited nor metered.
 * - Admitted: the RateLimit-* headers go on the response, whatever its status.
 * - Refused: 429 RATE_LIMITED or QUOTA_EXCEEDED, Retry-After and the same headers; nothing is taken.
 * - The limiter unreachable (Redis down): 503 SERVICE_UNAVAILABLE. A health registry does not run
 *   unlimited on an outage (docs/operations.md).
 * The public federation routes carry no API key, so they are limited per client address instead
 * (`federationPerMinute`, 0 = off): a child fetches its grant every few minutes, so the default (120
 * a minute) only stops a flood. Not metered: there is no key to bill.
 */
export function registerRateLimits(
  app: FastifyInstance,
  deps: { limiter: RateLimiter; meter: UsageMeter; clock: Clock; federationPerMinute: number },
): void {
  /** The limiter's decision for `limit`, or 503 when the limiter cannot be reached. */
  async function take(request: FastifyRequest, limit: LimitRequest): Promise<LimitDecision> {
    try {
      return decide(await deps.limiter.take(limit), limit.nowMs);
    } catch (error) {
      request.log.error({ err: error, limiter: deps.limiter.kind }, 'rate limiter unavailable; request refused');
      throw new WardError('SERVICE_UNAVAILABLE', 'Rate limits cannot be checked at the moment.', {}, UNAVAILABLE_RETRY_MS);
    }
  }

  /** The 429 of a refused decision, carrying its RateLimit-* headers. */
  function refused(decision: LimitDecision, message: string, details: Record<string, unknown>): WardError {
    const { code, retryAfterMs } = decision.refusal as NonNullable<LimitDecision['refusal']>;
    const refusal = new WardError(code, message, details, retryAfterMs);
    refusal.headers = decision.headers;
    return refusal;
  }

  if (deps.federationPerMinute > 0) {
    const limits = federationLimits(deps.federationPerMinute);
    app.addHook('onRequest', async (request, reply) => {
      if (!PUBLIC_FEDERATION_ROUTES.has(request.routeOptions.url ?? '')) return;
      const decision = await take(request, limitRequestFor(`federation-ip:${request.ip}`, limits, 'general', deps.clock.now().getTime()));
      reply.headers(decision.headers);
      if (decision.refusal) {
        throw refused(decision, "This address is over the federation routes' rate limit.", { ...decision.refusal.details, scope: 'federation' });
      }
    });
  }

  app.addHook('onRequest', async (request, reply) => {
    const { caller } = request;
    if (!caller?.pricingTier || caller.principal.kind !== 'api_key') return;
    const keyId = caller.principal.credentialId;
    const orgId = caller.principal.orgId ?? '';
    const bucket = bucketOf(request.method, request.routeOptions.url);
    const nowMs = deps.clock.now().getTime();
    const decision = await take(request, limitRequestFor(keyId, caller.pricingTier.limits, bucket, nowMs));
    const day = utcDay(nowMs);
    if (!decision.refusal) {
      reply.headers(decision.headers);
      deps.meter.record({ keyId, orgId, day, usageClass: 'general' });
      if (bucket !== 'general') deps.meter.record({ keyId, orgId, day, usageClass: bucket });
      return;
    }
    deps.meter.record({ keyId, orgId, day, usageClass: 'rate_limited' });
    const message = decision.refusal.code === 'QUOTA_EXCEEDED' ? "The key has used its tier's requests for this UTC day." : "The key is over its tier's rate limit.";
    throw refused(decision, message, { ...decision.refusal.details, tier: caller.pricingTier.name });
  });
}
