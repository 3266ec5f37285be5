import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import { systemClock, type Clock } from '../core/clock.ts';
import { publicBaseUrl, type Config } from '../core/config.ts';
import { loadRegistrySigner } from '../core/crypto/registry-signer.ts';
import { openStorage, storageOptionsFromConfig, type Storage } from '../core/storage/database.ts';
import { migrateToLatest } from '../core/storage/migrator.ts';
import { deleteExpiredIdempotencyKeys } from '../core/storage/stores/idempotency-store.ts';
import { createAgentService } from './agents/agent-service.ts';
import { registerErrorHandling } from './http/error-handler.ts';
import { registerPhiGuard } from './http/phi-guard.ts';
import { fingerprintBeforeValidation, requestIdFor } from './http/request-context.ts';
import { validatorCompiler } from './http/validation.ts';
import { agentRoutes } from './routes/agents.ts';
import { metadataRoutes } from './routes/metadata.ts';
import { openApiRoutes, openApiOptions } from './routes/openapi.ts';
import type { RegistryServices } from './services.ts';
import { loadKnownIssuers } from './trust/known-issuers.ts';

export type BuildRegistryOptions = {
  config: Config;
  /** An already open storage (tests share one); otherwise opened from the config and closed with the app. */
  storage?: Storage;
  clock?: Clock;
  /** `false` silences logging (tests); otherwise pino at REGISTRY_LOG_LEVEL to stdout or `logStream`. */
  logger?: false;
  logStream?: DestinationStream;
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
  const ownsStorage = options.storage === undefined;
  const storage = options.storage ?? (await openStorage(storageOptionsFromConfig(config)));
  try {
    await migrateToLatest(storage);
    const signer = await loadRegistrySigner(storage, config.REGISTRY_SIGNING_ALG, clock);
    const knownIssuers = await loadKnownIssuers(config, signer);

    const app = Fastify({
      logger:
        options.logger === false
          ? false
          : {
              level: config.REGISTRY_LOG_LEVEL,
              serializers: { req: requestLogFields },
              ...(options.logStream ? { stream: options.logStream } : {}),
            },
      bodyLimit: BODY_LIMIT_BYTES,
      genReqId: (request) => requestIdFor(request.headers),
      requestIdHeader: false,
      routerOptions: { ignoreTrailingSlash: false, maxParamLength: 512 },
      ajv: { customOptions: {} },
    }).withTypeProvider<TypeBoxTypeProvider>();

    const routes: Array<{ method: string; url: string }> = [];
    app.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) if (method !== 'HEAD') routes.push({ method, url: route.url });
    });
    const services: RegistryServices = {
      config,
      storage,
      clock,
      signer,
      agents: createAgentService({
        storage,
        trustContext: () => ({ registryJwks: signer.jwks() as { keys: Record<string, unknown>[] }, knownIssuers }),
      }),
      routes,
      baseUrl: () => publicBaseUrl(config, listeningPort(app)),
    };
    app.decorate('ward', services);
    app.setValidatorCompiler(validatorCompiler);
    // Only JSON bodies: without this Fastify would accept text/plain and fail later, less clearly.
    app.removeContentTypeParser(['text/plain']);
    app.addHook('onRequest', async (request, reply) => {
      reply.header('x-request-id', request.id);
    });
    registerErrorHandling(app);
    registerPhiGuard(app);
    app.addHook('preValidation', async (request) => fingerprintBeforeValidation(request));
    await app.register(swagger, openApiOptions(config));
    await app.register(metadataRoutes);
    await app.register(agentRoutes);
    await app.register(openApiRoutes);

    const sweep = setInterval(() => {
      deleteExpiredIdempotencyKeys(storage.db, clock.now().toISOString()).catch((error: unknown) =>
        app.log.warn({ err: error }, 'idempotency sweep failed'),
      );
    }, 10 * 60 * 1000);
    sweep.unref();
    app.addHook('onClose', async () => {
      clearInterval(sweep);
      if (ownsStorage) await storage.close();
    });
    await app.ready();
    return app;
  } catch (error) {
    if (ownsStorage) await storage.close();
    throw error;
  }
}

function listeningPort(app: FastifyInstance): number | undefined {
  const address = app.server.listening ? app.server.address() : null;
  return address && typeof address === 'object' ? address.port : undefined;
}

/**
 * What a request log line says about the request: method, route pattern and id. Never the raw URL
 * (a query string or path could carry a value the PHI guard blocks) and never a body.
 */
function requestLogFields(request: { method: string; routeOptions?: { url?: string }; id?: string }) {
  return { method: request.method, route: request.routeOptions?.url ?? '(unmatched)', id: request.id };
}
