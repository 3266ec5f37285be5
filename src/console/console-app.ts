/**
 * The admin console (docs/console.md): twelve server-rendered pages over the registry's public API.
 * It holds no storage of its own beyond its sessions, and it never bypasses the registry: every read
 * and every action is a registry call made with the signed-in person's own credential.
 */
import { randomBytes } from 'node:crypto';
import fastifyCookie from '@fastify/cookie';
import fastifyCsrf from '@fastify/csrf-protection';
import fastifyFormbody from '@fastify/formbody';
import fastifyHelmet from '@fastify/helmet';
import fastifySession from '@fastify/session';
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { createRegistryClient, type RegistryClient } from '../client/registry-client.ts';
import { systemClock, type Clock } from '../core/clock.ts';
import { httpKit, requestLogMode } from '../core/http/http-kit.ts';
import { createServerMetrics, probesAndMetrics } from '../core/http/http-metrics.ts';
import { consoleAccess } from './access/access.ts';
import { BoundedSessionStore } from './access/session-store.ts';
import { consoleErrorPages } from './console-error-pages.ts';
import type { ConsoleConfig } from './console-config.ts';
import { CONSOLE_CSP, EARLY_REFUSALS } from './console-refusals.ts';
import { consoleStatic } from './console-static.ts';
import { consoleLive } from './live.ts';
import { consolePages } from './pages/index.ts';

export type ConsoleOptions = {
  config: ConsoleConfig;
  logger?: FastifyServerOptions['logger'];
  /** The registry client (default: one for REGISTRY_URL). */
  registry?: RegistryClient;
  https?: { cert: Buffer; key: Buffer } | undefined;
  /** Session expiry follows this clock (tests move it). */
  clock?: Clock;
};

/** Builds the console without listening (console-server.ts listens): the server's own options, then {@link consoleApp}. */
export async function buildConsole(options: ConsoleOptions): Promise<FastifyInstance> {
  const { config } = options;
  const app = Fastify({
    // One request line, from the HTTP kit, at the level CONSOLE_REQUEST_LOG sets.
    logController: new LogController({ disableRequestLogging: true }),
    logger: options.logger ?? { level: config.CONSOLE_LOG_LEVEL },
    ...(options.https ? { https: options.https } : {}),
    bodyLimit: 64 * 1024,
    ...EARLY_REFUSALS,
    // Forwarded headers only from the configured proxies (X-Forwarded-Proto decides Secure cookies).
    trustProxy: config.trustedProxies.length > 0 ? [...config.trustedProxies] : false,
  });
  // Unchecked by the client: the routing page shows each answer beside its own verdict on the signature
  // (pages/routing-signature.ts), a failed one included, which a refused answer could not show.
  const registry =
    options.registry ??
    createRegistryClient({ baseUrl: config.REGISTRY_URL, timeoutMs: config.CONSOLE_REGISTRY_TIMEOUT_MS, userAgent: 'ward-console', verifySignatures: false });
  await app.register(consoleApp, { config, registry, clock: options.clock ?? systemClock });
  return app;
}

export type ConsoleAppOptions = { readonly config: ConsoleConfig; readonly registry: RegistryClient; readonly clock: Clock };

/**
 * The console as the `ward-console` plugin: security headers, sessions and CSRF, static files, error
 * pages, probes, access, the live stream and the pages, in that order.
 */
export const consoleApp = fastifyPlugin<ConsoleAppOptions>(
  async (app, { config, registry, clock }) => {
    const store = new BoundedSessionStore({ maxAgeMs: config.CONSOLE_SESSION_MAX_HOURS * 3_600_000 });
    app.addHook('onClose', async () => store.close());
    await app.register(httpKit, { metrics: createServerMetrics('console'), closeUnusedConnections: true, requestLog: requestLogMode(config.CONSOLE_REQUEST_LOG, config.REGISTRY_ENV) });

    await app.register(fastifyHelmet, {
      contentSecurityPolicy: { useDefaults: false, directives: CONSOLE_CSP },
      hsts: config.secureCookies ? { maxAge: 31_536_000, includeSubDomains: true } : false,
      referrerPolicy: { policy: 'same-origin' },
      crossOriginEmbedderPolicy: false,
    });
    await app.register(fastifyFormbody, { bodyLimit: 64 * 1024 });
    await app.register(fastifyCookie);
    await app.register(fastifySession, {
      // Sessions live in this process only, so a secret of its own, new at each start, is enough.
      secret: randomBytes(32).toString('base64url'),
      cookieName: config.secureCookies ? '__Host-ward_console' : 'ward_console',
      // No maxAge: a browser session cookie, gone when the browser closes; the server enforces the session's ages.
      cookie: { httpOnly: true, sameSite: 'strict', secure: config.secureCookies, path: '/' },
      saveUninitialized: false,
      store,
    });
    await app.register(fastifyCsrf, { sessionPlugin: '@fastify/session' });

    await app.register(consoleStatic);
    app.get('/', async (_request, reply) => reply.redirect('/dashboard', 302));
    await app.register(consoleErrorPages);
    // After the error pages: a plugin's routes take the error handler in place when it loads.
    await app.register(probesAndMetrics, {
      ready: async () => {
        const health = await registry.health();
        return health.ok ? undefined : `the registry at ${config.REGISTRY_URL} does not answer`;
      },
    });
    await app.register(consoleAccess, { config, registry, clock });
    await app.register(consoleLive);
    await app.register(consolePages, { config });
  },
  { name: 'ward-console', fastify: '5.x' },
);
