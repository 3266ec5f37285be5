import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { Redis } from 'ioredis';
import { httpKit, requestLogMode } from '../../core/http/http-kit.ts';
import { registerAuthentication, type TokenAuthenticator } from '../credentials/authentication.ts';
import { createTokenAuthenticator } from '../credentials/token-authenticator.ts';
import { isFederationToken, verifyFederationToken } from '../federation/federation-token.ts';
import { federationTokenIssuer } from '../federation/oidf/federation-token-issuer.ts';
import { registerErrorHandling } from '../http/error-handler.ts';
import { registerPhiGuard } from '../http/phi-guard.ts';
import { registerProductionHeaders } from '../http/production-headers.ts';
import { fingerprintBeforeValidation } from '../http/request-context.ts';
import { registerTextGuard } from '../http/text-guard.ts';
import { validatorCompiler } from '../http/validation.ts';
import { createMemoryRateLimiter } from '../metering/memory-rate-limiter.ts';
import { registerRateLimits } from '../metering/rate-limit-hook.ts';
import type { RateLimiter } from '../metering/rate-limiter.ts';
import { createRedisRateLimiter } from '../metering/redis-rate-limiter.ts';
import { createTrafficStats, type TrafficStats } from '../operations/traffic-stats.ts';
import { createUsageMeter, type UsageMeter } from '../metering/usage-meter.ts';

/** What the registry's request pipeline keeps: its limits, usage counts, traffic and draining state. */
export type RegistryEdge = {
  /** Shared buckets and the readiness check's Redis, when REDIS_URL is set. */
  readonly redis: Redis | undefined;
  readonly limiter: RateLimiter;
  readonly meter: UsageMeter;
  readonly traffic: TrafficStats;
  /** Whether the registry has begun to close, or to drain before it: /readyz then sends traffic elsewhere. */
  draining(): boolean;
  /** Turns /readyz to 503 while everything keeps serving (the drain before a shutdown). */
  startDraining(): void;
};

declare module 'fastify' {
  interface FastifyInstance {
    wardEdge: RegistryEdge;
  }
}

/**
 * The `ward-registry-edge` plugin: what every request goes through before and after its route, in
 * this order: validation and content types, the request id, traffic counts, the error envelope, the
 * HTTP kit (metrics, logging), authentication, rate limits, production headers, the PHI and text
 * guards, and the idempotency fingerprint. Decorates the app with `wardEdge`.
 */
export const edgePlugin = fastifyPlugin(
  async (app: FastifyInstance) => {
    const { clock } = app.ward;
    app.setValidatorCompiler(validatorCompiler);
    // Only JSON bodies: without this Fastify would accept text/plain and fail later, less clearly.
    app.removeContentTypeParser(['text/plain']);
    app.addHook('onRequest', async (request, reply) => {
      reply.header('x-request-id', request.id);
    });
    const traffic = createTrafficStats({ now: () => clock.now().getTime() });
    app.addHook('onResponse', async (_request, reply) => traffic.record(reply.statusCode));
    registerErrorHandling(app);
    await app.register(httpKit, {
      metrics: app.wardInstance.serverMetrics,
      closeUnusedConnections: true,
      requestLog: requestLogMode(app.ward.config.REGISTRY_REQUEST_LOG, app.ward.config.REGISTRY_ENV),
    });
    let draining = false;
    app.addHook('preClose', async () => {
      draining = true;
    });
    const { redis, limiter, meter } = await registerCallerChecks(app);
    app.addHook('preValidation', async (request) => fingerprintBeforeValidation(request));
    app.decorate('wardEdge', {
      redis,
      limiter,
      meter,
      traffic,
      draining: () => draining,
      startDraining: () => {
        draining = true;
      },
    });
  },
  { name: 'ward-registry-edge', fastify: '5.x', dependencies: ['ward-registry-service-set'] },
);

/**
 * Authentication first: an unauthenticated or under-scoped request is refused before its body is
 * read. Limits right after it: the key and tier are known, and a refusal costs nothing more. Then the
 * production headers and the guards on what a request may carry.
 */
async function registerCallerChecks(app: FastifyInstance): Promise<Pick<RegistryEdge, 'redis' | 'limiter' | 'meter'>> {
  const { config, apiKeys, registryId, clock, storage } = app.ward;
  const redis = config.REDIS_URL ? new Redis(config.REDIS_URL, { lazyConnect: false, maxRetriesPerRequest: 2 }) : undefined;
  registerAuthentication(app, {
    config,
    apiKeys,
    ...withTokens(createTokenAuthenticator(config, redis ? { redis } : {})),
    federation: { isToken: isFederationToken, verify: async (token) => verifyFederationToken(token, await federationTokenIssuer(app.ward, token), registryId, clock.now()) },
  });
  // Shared buckets in Redis when several instances serve the same keys (docs/operations.md).
  const limiter = redis ? createRedisRateLimiter(redis) : createMemoryRateLimiter();
  // An outage refuses API-key requests (503) rather than lifting limits; say why in the log.
  redis?.on('error', (error: unknown) => app.log.warn({ err: error }, 'redis connection error'));
  const meter = createUsageMeter({ storage, log: (error) => app.log.warn({ err: error }, 'usage flush failed') });
  registerRateLimits(app, { limiter, meter, clock, federationPerMinute: config.REGISTRY_FEDERATION_RATE_PER_MINUTE });
  await registerProductionHeaders(app, config);
  registerPhiGuard(app, { maxTextChars: config.REGISTRY_PHI_MAX_TEXT_CHARS });
  registerTextGuard(app);
  return { redis, limiter, meter };
}

function withTokens(tokens: TokenAuthenticator | undefined): { tokens?: TokenAuthenticator } {
  return tokens ? { tokens } : {};
}
