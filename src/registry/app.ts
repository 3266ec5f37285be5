import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import { systemClock, type Clock } from '../core/clock.ts';
import { publicBaseUrl, type Config } from '../core/config.ts';
import { loadRegistrySigner } from './trust/registry-signer.ts';
import { openStorage, storageOptionsFromConfig, type Storage } from './storage/database.ts';
import { migrateToLatest } from './storage/migrator.ts';
import { deleteExpiredIdempotencyKeys } from './storage/stores/idempotency-store.ts';
import { registryUri } from '../core/ids.ts';
import { createAgentService } from './agents/agent-service.ts';
import { Redis } from 'ioredis';
import { registerAuthentication, type TokenAuthenticator } from './auth/authentication.ts';
import { tlsServerOptions, watchCrl, type TlsFiles } from './auth/mtls.ts';
import { createTokenAuthenticator } from './auth/token-authenticator.ts';
import { registerProductionHeaders } from './http/production-headers.ts';
import { createApiKeyService } from './keys/api-key-service.ts';
import { apiKeyRoutes } from './routes/api-keys.ts';
import { createMemoryRateLimiter } from './limits/memory-rate-limiter.ts';
import { registerRateLimits } from './limits/rate-limit-hook.ts';
import { createRedisRateLimiter } from './limits/redis-rate-limiter.ts';
import { usageRoutes } from './routes/usage.ts';
import { createUsageMeter } from './usage/usage-meter.ts';
import { createDiscoveryService } from './discovery/discovery-service.ts';
import { createDiscoveryAnswers } from './discovery/discovery-answers.ts';
import { openEventHub, type EventHub } from './events/event-hub.ts';
import { createHealthProber } from './health/health-prober.ts';
import { createRoutingService } from './routing/routing-service.ts';
import { discoveryRoutes } from './routes/discovery.ts';
import { routingRoutes } from './routes/routing.ts';
import { trustRoutes } from './routes/trust.ts';
import { registryRoutes } from './routes/registries.ts';
import { createChildRegistries } from './federation/child-registries.ts';
import { createFederatedDiscovery } from './federation/federated-discovery.ts';
import { isFederationToken, verifyFederationToken } from './federation/federation-token.ts';
import { createParentLink } from './federation/parent-link.ts';
import { clientErrorInEnvelope, frameworkErrorsInEnvelope, registerErrorHandling } from './http/error-handler.ts';
import { registerPhiGuard } from './http/phi-guard.ts';
import { fingerprintBeforeValidation, requestIdFor } from './http/request-context.ts';
import { validatorCompiler } from './http/validation.ts';
import { httpKit, serverLogger } from '../core/http/http-kit.ts';
import { agentRoutes } from './routes/agents.ts';
import { metadataRoutes } from './routes/metadata.ts';
import { openApiRoutes, openApiOptions } from './routes/openapi.ts';
import { registryServices, type RegistryServices } from './services.ts';
import { loadKnownIssuers } from './trust/known-issuers.ts';
import { createLedgerService } from './ledger/ledger-service.ts';
import { eventHistoryRoutes, eventRoutes, type EventRoutesOptions } from './routes/events.ts';
import { createInstanceHeartbeat } from './operations/instance-heartbeat.ts';
import { createRegistryMetrics, type RegistryMetrics } from './operations/registry-metrics.ts';
import { createKeyRenewal } from './trust/key-renewal.ts';
import { registerTextGuard } from './http/text-guard.ts';
import { createGuardedFetch } from '../core/net/guarded-fetch.ts';
import { keySealerFromConfig } from '../core/crypto/key-sealer.ts';
import { createServerMetrics } from '../core/http/http-metrics.ts';
import { createTrafficStats } from './operations/traffic-stats.ts';
import { operationsRoutes } from './routes/operations.ts';
import { computerUseRoutes } from './routes/computer-use.ts';
import { fhirRoutes } from './routes/fhir.ts';
import { createComputerUseService } from './computer-use/computer-use-service.ts';
import { transparencyRoutes } from './routes/transparency.ts';
import { openIdFederationRoutes } from './routes/openid-federation.ts';

export type BuildRegistryOptions = {
  config: Config;
  /** An already open storage (tests share one); otherwise opened from the config and closed with the app. */
  storage?: Storage;
  clock?: Clock;
  /** `false` silences logging (tests); otherwise pino at REGISTRY_LOG_LEVEL to stdout or `logStream`. */
  logger?: false;
  logStream?: DestinationStream;
  /** Event-stream tunables (ping interval, stall timeout…); tests shorten them. */
  events?: EventRoutesOptions;
};

/** Contract §2: bodies over 1 MiB are refused. */
export const BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * Builds the registry as a ready Fastify app without listening (house style: build and listen are
 * separate). Opens and migrates storage, loads or creates the signing key, registers every route.
 */
export async function buildRegistry(options: BuildRegistryOptions): Promise<FastifyInstance> {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  const startedAt = clock.now();
  const ownsStorage = options.storage === undefined;
  const storage = options.storage ?? (await openStorage(storageOptionsFromConfig(config)));
  let eventHub: EventHub | undefined;
  try {
    await migrateToLatest(storage);
    const keySealer = keySealerFromConfig(config);
    const signer = await loadRegistrySigner(storage, config.REGISTRY_SIGNING_ALG, clock, config.REGISTRY_KEY_LIFETIME_DAYS, keySealer);
    const knownIssuers = await loadKnownIssuers(config, signer);

    // HTTPS when a certificate is configured; in mtls mode the handshake also demands a client
    // certificate chained to REGISTRY_MTLS_CA_FILE and not revoked by REGISTRY_MTLS_CRL_FILE.
    const tlsFiles: TlsFiles = {
      certFile: config.REGISTRY_TLS_CERT_FILE ?? '',
      keyFile: config.REGISTRY_TLS_KEY_FILE ?? '',
      ...(config.REGISTRY_AUTH_MODE === 'mtls' ? { caFile: config.REGISTRY_MTLS_CA_FILE as string } : {}),
      ...(config.REGISTRY_AUTH_MODE === 'mtls' && config.REGISTRY_MTLS_CRL_FILE ? { crlFile: config.REGISTRY_MTLS_CRL_FILE } : {}),
    };
    const app = Fastify({
      logger: serverLogger(options.logger === false ? false : { level: config.REGISTRY_LOG_LEVEL, ...(options.logStream ? { stream: options.logStream } : {}) }),
      bodyLimit: BODY_LIMIT_BYTES,
      genReqId: (request) => requestIdFor(request.headers),
      requestIdHeader: false,
      routerOptions: { ignoreTrailingSlash: false, maxParamLength: 512 },
      ...(config.REGISTRY_TLS_CERT_FILE
        ? {
            https: tlsServerOptions(tlsFiles),
          }
        : {}),
      ajv: { customOptions: {} },
      // Failures before routing, and those of Node's HTTP parser, in the envelope too (error-handler.ts).
      frameworkErrors: frameworkErrorsInEnvelope,
      clientErrorHandler: clientErrorInEnvelope,
    }).withTypeProvider<TypeBoxTypeProvider>();

    if (config.REGISTRY_TLS_CERT_FILE && tlsFiles.crlFile) {
      const stopWatching = watchCrl(app.server as never, tlsFiles, (message, error) => (error ? app.log.warn({ err: error }, message) : app.log.info(message)));
      app.addHook('onClose', async () => stopWatching());
    }
    const apiKeys = await createApiKeyService({
      storage,
      clock,
      ...(config.REGISTRY_API_KEY_SECRET ? { secret: config.REGISTRY_API_KEY_SECRET } : {}),
    });
    const routes: Array<{ method: string; url: string }> = [];
    app.addHook('onRoute', (route) => {
      // HEAD twins and the CORS preflight are transport, not operations of the API.
      for (const method of [route.method].flat()) if (method !== 'HEAD' && method !== 'OPTIONS') routes.push({ method, url: route.url });
    });
    const registryId = registryUri(config.REGISTRY_JURISDICTION, config.REGISTRY_NAME);
    // Once listening the address is fixed: computed once then (discovery asks per result).
    let listeningBaseUrl: string | undefined;
    const baseUrl = () => listeningBaseUrl ?? publicBaseUrl(config, listeningPort(app));
    app.addHook('onListen', async () => {
      listeningBaseUrl = publicBaseUrl(config, listeningPort(app));
    });
    // A registry without a parent is its own trust anchor (contract §5); with one, the chain is the
    // last grant its parent gave (docs/federation.md).
    // Federation fetches URLs others chose: in production never a private or loopback address (SSRF).
    const federationFetch = createGuardedFetch({ allowPrivate: config.REGISTRY_ENV !== 'production' || config.REGISTRY_ALLOW_PRIVATE_ENDPOINTS });
    const parentLink = await createParentLink({
      fetch: federationFetch,
      parentUrl: config.REGISTRY_PARENT_URL,
      registryId,
      storage,
      signer,
      clock,
      timeoutMs: config.REGISTRY_FEDERATION_TIMEOUT_MS,
      log: (message, error) => app.log.warn({ err: error }, message),
    });
    const trustChain = () => parentLink.trustChain();
    const childRegistries = createChildRegistries({ config, storage, clock, signer, registryId, trustChain, fetch: federationFetch });
    const agents = createAgentService({
      storage,
      trustContext: () => ({ registryJwks: signer.jwks() as { keys: Record<string, unknown>[] }, knownIssuers }),
    });
    const healthProber = createHealthProber({
      storage,
      clock,
      options: {
        intervalMs: config.REGISTRY_HEALTH_INTERVAL_MS,
        timeoutMs: config.REGISTRY_HEALTH_TIMEOUT_MS,
        concurrency: config.REGISTRY_HEALTH_CONCURRENCY,
        // Contract §4: private and loopback targets only outside production, or when allowed.
        allowPrivate: config.REGISTRY_ENV !== 'production' || config.REGISTRY_ALLOW_PRIVATE_ENDPOINTS,
      },
      log: (error) => app.log.warn({ err: error }, 'health probe round failed'),
      // `services` exists by the time the prober runs (it starts when the registry listens).
      onProbe: (result) => services.metrics.probed(result.status, result.reason),
    });
    const serverMetrics = createServerMetrics('registry');
    eventHub = await openEventHub(storage, {
      postgres: storage.backend === 'postgres' && config.DATABASE_URL ? { url: config.DATABASE_URL, schema: config.DATABASE_SCHEMA } : undefined,
      onError: (error) => app.log.warn({ err: error }, 'event wake-up connection failed; reconnecting'),
    });
    const heartbeat = createInstanceHeartbeat({ storage, clock, log: (error) => app.log.warn({ err: error }, 'instance heartbeat failed') });
    if (config.REGISTRY_ENV === 'production' && !keySealer.sealing) {
      app.log.warn('the signing keys are stored unencrypted: set REGISTRY_KEY_ENCRYPTION_KEY (or _FILE) to seal them at rest (docs/security.md)');
    }
    const keyRenewal = createKeyRenewal({
      storage,
      signer,
      clock,
      registryId,
      lifetimeDays: config.REGISTRY_KEY_LIFETIME_DAYS,
      renewDays: config.REGISTRY_KEY_RENEW_DAYS,
      log: { info: (fields, message) => app.log.info(fields, message), warn: (fields, message) => app.log.warn(fields, message) },
      // The parent's statements must name the new key before bundles signed with it can verify.
      onRotated: () => parentLink.refresh().catch((error: unknown) => app.log.warn({ err: error }, 'refreshing the delegation after renewal failed')),
    });
    const federatedDiscovery = createFederatedDiscovery({
      children: childRegistries,
      signer,
      registryId,
      clock,
      timeoutMs: config.REGISTRY_FEDERATION_TIMEOUT_MS,
      fetch: federationFetch,
    });
    // Bound here for the closures below: `eventHub` is a `let` (closed on failure), so it does not narrow inside them.
    const hub = eventHub;
    const discovery = createDiscoveryService({
      storage,
      registryJurisdiction: config.REGISTRY_JURISDICTION,
      trustBundleUrl: (agentId) => `${baseUrl()}/v1/trust/bundle?subject=${encodeURIComponent(agentId)}`,
      keptRows: config.REGISTRY_DISCOVERY_KEPT_ROWS,
      committedSeq: () => hub.committedSeq(),
      now: () => clock.now().getTime(),
    });
    const discoveryAnswers = createDiscoveryAnswers({ config, discovery, federatedDiscovery, signer, clock, baseUrl, committedSeq: () => hub.committedSeq() });
    const services: RegistryServices = {
      config,
      keyRenewal,
      healthProber,
      storage,
      clock,
      signer,
      agents,
      apiKeys,
      ledger: createLedgerService({ storage, signer, clock }),
      discovery,
      discoveryAnswers,
      eventHub,
      routing: createRoutingService({
        agents,
        clock,
        discovery,
        signer,
        registryId,
        trustChain,
        signResponses: config.REGISTRY_SIGN_RESPONSES,
        staleAfterMs: 3 * config.REGISTRY_HEALTH_INTERVAL_MS,
        committedSeq: () => hub.committedSeq(),
      }),
      registryId,
      trustChain,
      childRegistries,
      parentLink,
      federatedDiscovery,
      routes,
      metrics: undefined as unknown as RegistryMetrics,
      computerUse: createComputerUseService({
        config,
        storage,
        clock,
        apiKeys,
        instanceId: heartbeat.instanceId,
        isInstanceLive: heartbeat.isLive,
        log: (error, message) => app.log.warn({ err: error }, message),
      }),
      baseUrl,
    };
    services.metrics = createRegistryMetrics(serverMetrics, {
      storage,
      discoveryCacheStats: services.discoveryAnswers.cacheStats,
      keptRowStats: discovery.keptRowStats,
      signingKeyExpiresInSeconds: () => keyRenewal.expiresInSeconds(),
    });
    await app.register(registryServices, { services });
    app.setValidatorCompiler(validatorCompiler);
    // Only JSON bodies: without this Fastify would accept text/plain and fail later, less clearly.
    app.removeContentTypeParser(['text/plain']);
    app.addHook('onRequest', async (request, reply) => {
      reply.header('x-request-id', request.id);
    });
    const traffic = createTrafficStats({ now: () => clock.now().getTime() });
    app.addHook('onResponse', async (_request, reply) => traffic.record(reply.statusCode));
    registerErrorHandling(app);
    await app.register(httpKit, { metrics: serverMetrics, closeUnusedConnections: true });
    // Set once the registry begins to close: /readyz then sends traffic elsewhere.
    let draining = false;
    app.addHook('preClose', async () => {
      draining = true;
    });
    // Authentication first: an unauthenticated or under-scoped request is refused before its body is read.
    const redis = config.REDIS_URL ? new Redis(config.REDIS_URL, { lazyConnect: false, maxRetriesPerRequest: 2 }) : undefined;
    registerAuthentication(app, {
      config,
      apiKeys,
      ...withTokens(createTokenAuthenticator(config, redis ? { redis } : {})),
      federation: { isToken: isFederationToken, verify: (token) => verifyFederationToken(token, parentLink.parent(), registryId, clock.now()) },
    });
    // Limits right after authentication: the key and tier are known, and a refusal costs nothing more.
    // Shared buckets in Redis when several instances serve the same keys (docs/operations.md).
    const limiter = redis ? createRedisRateLimiter(redis) : createMemoryRateLimiter();
    // An outage refuses API-key requests (503) rather than lifting limits; say why in the log.
    redis?.on('error', (error: unknown) => app.log.warn({ err: error }, 'redis connection error'));
    const meter = createUsageMeter({ storage, log: (error) => app.log.warn({ err: error }, 'usage flush failed') });
    registerRateLimits(app, { limiter, meter, clock, federationPerMinute: config.REGISTRY_FEDERATION_RATE_PER_MINUTE });
    await registerProductionHeaders(app, config);
    registerPhiGuard(app);
    registerTextGuard(app);
    app.addHook('preValidation', async (request) => fingerprintBeforeValidation(request));
    await app.register(swagger, openApiOptions(config));
    await app.register(metadataRoutes);
    await app.register(agentRoutes);
    await app.register(eventRoutes, options.events ?? {});
    await app.register(eventHistoryRoutes);
    await app.register(transparencyRoutes);
    await app.register(discoveryRoutes);
    await app.register(routingRoutes);
    await app.register(trustRoutes);
    await app.register(registryRoutes);
    await app.register(openIdFederationRoutes);
    await app.register(apiKeyRoutes);
    await app.register(usageRoutes, { limiter, meter });
    await app.register(operationsRoutes, { traffic, heartbeat, startedAt, redis, metrics: serverMetrics, draining: () => draining });
    await app.register(computerUseRoutes, { computerUse: services.computerUse });
    await app.register(fhirRoutes, { prefix: '/fhir' });
    await app.register(openApiRoutes);

    const sweep = setInterval(() => {
      deleteExpiredIdempotencyKeys(storage.db, clock.now().toISOString()).catch((error: unknown) =>
        app.log.warn({ err: error }, 'idempotency sweep failed'),
      );
    }, 10 * 60 * 1000);
    sweep.unref();
    // Only a listening registry probes; an app driven by inject() in tests runs rounds on demand.
    if (config.REGISTRY_HEALTH_PROBES) app.addHook('onListen', async () => healthProber.start());
    app.addHook('onListen', async () => heartbeat.start());
    app.addHook('onListen', async () => keyRenewal.start());
    // Runs left unended by an instance that stopped (crashed) are recorded as failed by the others.
    const orphanSweep = setInterval(() => {
      services.computerUse.runs.sweepOrphans().catch((error: unknown) => app.log.warn({ err: error }, 'computer-use sweep failed'));
    }, 60_000);
    orphanSweep.unref();
    parentLink.start();
    app.addHook('onClose', async () => {
      services.metrics.close();
      await services.computerUse.close();
      // The last second of usage counts goes to the database before it closes.
      await meter.close().catch((error: unknown) => app.log.warn({ err: error }, 'usage flush at close failed'));
      redis?.disconnect();
      await healthProber.stop();
      await heartbeat.stop();
      parentLink.stop();
      keyRenewal.stop();
      await services.eventHub.close();
      clearInterval(sweep);
      clearInterval(orphanSweep);
      if (ownsStorage) await storage.close();
    });
    await app.ready();
    return app;
  } catch (error) {
    await eventHub?.close();
    if (ownsStorage) await storage.close();
    throw error;
  }
}

function withTokens(tokens: TokenAuthenticator | undefined): { tokens?: TokenAuthenticator } {
  return tokens ? { tokens } : {};
}

function listeningPort(app: FastifyInstance): number | undefined {
  const address = app.server.listening ? app.server.address() : null;
  return address && typeof address === 'object' ? address.port : undefined;
}
