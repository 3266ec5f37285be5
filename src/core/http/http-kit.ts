/**
 * The HTTP kit: what every Ward server (registry, gateway, agent runtime, console) sets up the same
 * way, in one place: the request log line, the logger options around it, reading a request header,
 * and the `ward-http-kit` plugin (metrics on every answer, unused connections closed at shutdown)
 * that the servers register first and their other plugins declare as a dependency. Each server's own
 * choices (request ids, error envelopes, body limits) stay in its builder.
 */
import type { IncomingHttpHeaders } from 'node:http';
import fastifyPlugin from 'fastify-plugin';
import type { DestinationStream } from 'pino';
import type { ServerMetrics } from './http-metrics.ts';
import { trackUnusedConnections } from './unused-connections.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The server's metrics (decorated by the `ward-http-kit` plugin). */
    httpMetrics: ServerMetrics;
  }
}

/**
 * What a request log line says about the request: method, route pattern and id. Never the raw URL
 * (a query string or path could carry a value the PHI guard blocks) and never a body.
 */
export function requestLogFields(request: { method: string; routeOptions?: { url?: string }; id?: string }) {
  return { method: request.method, route: request.routeOptions?.url ?? '(unmatched)', id: request.id };
}

export type ServerLogSettings = {
  readonly level: string;
  /** Fields on every line (`{ component: 'gateway' }`, `{ agent: alias }`); default pino's pid and hostname. */
  readonly base?: Record<string, unknown>;
  /** Default stdout. */
  readonly stream?: DestinationStream;
};

/** Fastify's `logger` option for a Ward server: pino at `level`, requests logged by `requestLogFields`; `false` silences it. */
export function serverLogger(settings: ServerLogSettings | false) {
  if (settings === false) return false;
  return {
    level: settings.level,
    ...(settings.base ? { base: settings.base } : {}),
    serializers: { req: requestLogFields },
    ...(settings.stream ? { stream: settings.stream } : {}),
  };
}

/** The first value of a request header (Node gives an array for some repeated ones), if any. */
export function firstHeader(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** How much of the traffic a server logs: a line per answer, only refusals and failures, or nothing. */
export type RequestLogMode = 'all' | 'errors' | 'none';

/**
 * The request log of a server (REGISTRY_REQUEST_LOG, CONSOLE_REQUEST_LOG, MESH_REQUEST_LOG): as set,
 * else `all` in production (an access log) and `errors` elsewhere, where a line per request drowned
 * the start-up summary of `npm start` (issue 33 item 11).
 */
export function requestLogMode(setting: RequestLogMode | undefined, environment: string): RequestLogMode {
  return setting ?? (environment === 'production' ? 'all' : 'errors');
}

export type HttpKitOptions = {
  /** Counts every answer (register the kit before the routes) and is decorated as `httpMetrics`. */
  readonly metrics: ServerMetrics;
  /**
   * One line per answer (method, route, id, status, milliseconds): every answer, answers of 400 and
   * over (warn, error for 5xx), or none. The server builds Fastify with `disableRequestLogging`, so
   * this is its only request line. Unset: Fastify's own two lines per request.
   */
  readonly requestLog?: RequestLogMode;
  /** Destroy connections that never carried a request when the server closes (unused-connections.ts). Default false. */
  readonly closeUnusedConnections?: boolean;
};

/**
 * The `ward-http-kit` plugin, registered first by the registry, the gateway and the console; plugins
 * that need `httpMetrics` name it in `dependencies`, so a server that forgot it fails at start-up.
 */
export const httpKit = fastifyPlugin<HttpKitOptions>(
  async (app, options) => {
    app.decorate('httpMetrics', options.metrics);
    options.metrics.instrument(app);
    const requestLog = options.requestLog;
    if (requestLog !== undefined && requestLog !== 'none') {
      app.addHook('onResponse', async (request, reply) => {
        const status = reply.statusCode;
        if (requestLog === 'errors' && status < 400) return;
        const level = status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info';
        request.log[level]({ req: request, status, ms: Math.round(reply.elapsedTime) }, 'request');
      });
    }
    if (options.closeUnusedConnections) {
      const connections = trackUnusedConnections(app.server);
      app.addHook('preClose', async () => connections.destroyUnused());
    }
  },
  { name: 'ward-http-kit', fastify: '5.x' },
);
