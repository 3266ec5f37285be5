/**
 * The admin console (docs/console.md): nine server-rendered pages over the registry's public API.
 * It holds no storage of its own beyond its sessions, and it never bypasses the registry: every read
 * and every action is a registry call made with the signed-in person's own credential.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import fastifyCookie from '@fastify/cookie';
import fastifyCsrf from '@fastify/csrf-protection';
import fastifyFormbody from '@fastify/formbody';
import fastifyHelmet from '@fastify/helmet';
import fastifySession from '@fastify/session';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import { createRegistryClient, type RegistryClient } from '../client/registry-client.ts';
import { systemClock, type Clock } from '../core/clock.ts';
import { httpKit } from '../core/http/http-kit.ts';
import { createServerMetrics, probesAndMetrics } from '../core/http/http-metrics.ts';
import { consoleAccess } from './access/access.ts';
import { BoundedSessionStore } from './access/session-store.ts';
import type { ConsoleConfig } from './console-config.ts';
import { consoleLive } from './live.ts';
import { consolePages } from './pages/index.ts';
import { html } from './views/html.ts';
import { sendPage } from './views/send-page.ts';
import { clientErrorAnswer } from '../core/http/client-error.ts';
import { errorEnvelope } from '../core/errors.ts';

export type ConsoleOptions = {
  config: ConsoleConfig;
  logger?: FastifyServerOptions['logger'];
  /** The registry client (default: one for REGISTRY_URL). */
  registry?: RegistryClient;
  https?: { cert: Buffer; key: Buffer } | undefined;
  /** Session expiry follows this clock (tests move it). */
  clock?: Clock;
};

/**
 * The page's own origin only, no inline script or style, no framing, forms post only here: text
 * that reached a page as markup could not run, and the console cannot be clickjacked.
 */
export const CONSOLE_CSP = {
  'default-src': ["'none'"],
  'script-src': ["'self'"],
  'style-src': ["'self'"],
  'img-src': ["'self'"],
  'connect-src': ["'self'"],
  'form-action': ["'self'"],
  'frame-ancestors': ["'none'"],
  'base-uri': ["'none'"],
};

const require = createRequire(import.meta.url);
const STATIC_FILES: ReadonlyArray<readonly [name: string, path: string | URL, type: string]> = [
  ['console.css', new URL('./web/console.css', import.meta.url), 'text/css; charset=utf-8'],
  ['console.js', new URL('./web/console.js', import.meta.url), 'text/javascript; charset=utf-8'],
  ['favicon.svg', new URL('./web/favicon.svg', import.meta.url), 'image/svg+xml'],
  ['htmx.min.js', require.resolve('htmx.org/dist/htmx.min.js'), 'text/javascript; charset=utf-8'],
];

export async function buildConsole(options: ConsoleOptions): Promise<FastifyInstance> {
  const { config } = options;
  const app = Fastify({
    logger: options.logger ?? { level: config.CONSOLE_LOG_LEVEL },
    ...(options.https ? { https: options.https } : {}),
    bodyLimit: 64 * 1024,
    // Errors raised before routing get a short page of our own, never Fastify's or Node's text with the URL in it.
    frameworkErrors: (_error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      void reply.code(400).headers(REFUSAL_HEADERS);
      if (prefersJson(request.headers.accept)) void reply.type('application/json').send(errorEnvelope('BAD_REQUEST', 'The address or the request is malformed.', {}, null));
      else void reply.type('text/html; charset=utf-8').send(plainPage(400));
    },
    // Before any request exists there is no Accept header to read (431: it may be the header that
    // overflowed): a page, with the headers every console page carries.
    clientErrorHandler: clientErrorAnswer((status) => ({ contentType: 'text/html; charset=utf-8', body: plainPage(status), headers: REFUSAL_HEADERS })),
    // Forwarded headers only from the configured proxies (X-Forwarded-Proto decides Secure cookies).
    trustProxy: config.trustedProxies.length > 0 ? [...config.trustedProxies] : false,
  });
  // Unchecked by the client: the routing page shows each answer beside its own verdict on the signature
  // (pages/routing-signature.ts), a failed one included, which a refused answer could not show.
  const registry =
    options.registry ??
    createRegistryClient({ baseUrl: config.REGISTRY_URL, timeoutMs: config.CONSOLE_REGISTRY_TIMEOUT_MS, userAgent: 'ward-console', verifySignatures: false });
  const store = new BoundedSessionStore({ maxAgeMs: config.CONSOLE_SESSION_MAX_HOURS * 3_600_000 });
  app.addHook('onClose', async () => store.close());
  await app.register(httpKit, { metrics: createServerMetrics('console'), closeUnusedConnections: true });

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

  for (const [name, path, type] of STATIC_FILES) {
    const body = readFileSync(path);
    app.get(`/static/${name}`, async (_request, reply) => reply.type(type).header('cache-control', 'no-cache').send(body));
  }
  app.get('/', async (_request, reply) => reply.redirect('/dashboard', 302));

  app.setNotFoundHandler(async (request, reply) =>
    sendPage(request, reply, { title: 'No such page', status: 404 }, html`<p>There is no page at this address. The <a href="/dashboard">dashboard</a> links to every page.</p>`),
  );
  app.setErrorHandler(async (error: Error & { statusCode?: number; code?: string }, request, reply) => {
    if (error.code?.startsWith('FST_CSRF')) {
      return sendPage(request, reply, { title: 'Form refused', status: 403 },
        html`<p role="alert">This form was refused: it carried no valid security token (it may be stale, or sent from elsewhere). Go back, reload the page and try again.</p>`);
    }
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    if (status === 500) request.log.error({ err: error }, 'console page failed');
    return sendPage(request, reply, { title: status === 500 ? 'Something went wrong' : 'Request refused', status },
      html`<p role="alert">${status === 500 ? 'The console failed to build this page. The error is in its log.' : 'The request could not be read.'}</p>`);
  });
  // After the handlers above: a plugin's routes take the error handler in place when it loads.
  await app.register(probesAndMetrics, {
    ready: async () => {
      const health = await registry.health();
      return health.ok ? undefined : `the registry at ${config.REGISTRY_URL} does not answer`;
    },
  });
  await app.register(consoleAccess, { config, registry, clock: options.clock ?? systemClock });
  await app.register(consoleLive);
  await app.register(consolePages, { config });
  return app;
}

/**
 * What every console answer carries, the earliest refusals included (they are sent before the
 * security plugin runs): the page policy, no framing, no sniffing, no caching.
 */
const REFUSAL_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': Object.entries(CONSOLE_CSP)
    .map(([directive, sources]) => `${directive} ${sources.join(' ')}`)
    .join('; '),
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
  'referrer-policy': 'same-origin',
};

/** Whether an Accept header ranks JSON above HTML (a script or a client, not a person's browser). */
function prefersJson(accept: string | undefined): boolean {
  if (!accept) return false;
  const weight = (type: string) =>
    Math.max(
      -1,
      ...accept.split(',').flatMap((part) => {
        const [media, ...parameters] = part.trim().toLowerCase().split(';');
        if (media?.trim() !== type) return [];
        const q = parameters.map((parameter) => /^\s*q=([\d.]+)\s*$/.exec(parameter)?.[1]).find(Boolean);
        return [q === undefined ? 1 : Number(q)];
      }),
    );
  const json = weight('application/json');
  return json > 0 && json >= weight('text/html');
}

/**
 * A page for a request refused before routing: the console's look (its stylesheet, header and problem
 * box) without its script or session, and nothing of the request.
 */
function plainPage(status: 400 | 431): string {
  const what = status === 431 ? "Its headers are too large (often too many or too large cookies: clear this site's cookies)." : 'The address or the request is malformed.';
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">' +
    '<title>Request refused · Ward console</title><link rel="icon" href="/static/favicon.svg" type="image/svg+xml"><link rel="stylesheet" href="/static/console.css"></head>' +
    '<body><header class="top"><a class="brand" href="/dashboard">Ward <span>console</span></a></header>' +
    `<main id="main"><h1>Request refused</h1><div class="problem" role="alert"><p>${what}</p></div><p><a href="/dashboard">Go to the dashboard</a></p></main></body></html>`
  );
}
