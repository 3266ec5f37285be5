import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { isLoopback } from './loopback.ts';

declare module 'fastify' {
  interface FastifyReply {
    /** The error code of an enveloped error answer, for the refusal counters (set by the error handler). */
    errorCode: string | null;
  }
}

/**
 * Prometheus metrics for one Ward server (registry, gateway or console), with `prom-client`
 * (docs/operations.md, "Metrics"). Each server has its own registry of metrics, so several servers in
 * one process (tests, `ward start`) never mix their figures. What every server gets:
 * - `ward_http_requests_total{server,method,route,status}` and
 *   `ward_http_request_duration_seconds{server,method,route,status_class}`: by route template (never the
 *   raw path, which could carry identifiers), `unmatched` for paths no route serves;
 * - `ward_http_refusals_total{server,code}`: enveloped error answers by their code (rate limits, quotas,
 *   the PHI guard, authentication…): counts only, never the refused content;
 * - the process's own figures (`process_*`, `nodejs_*`: CPU, memory, event-loop lag, handles).
 */
export function createServerMetrics(server: 'registry' | 'gateway' | 'console') {
  const registry = new Registry();
  registry.setDefaultLabels({ server });
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({ name: 'ward_http_requests_total', help: 'HTTP requests answered, by route template and status', labelNames: ['method', 'route', 'status'], registers: [registry] });
  const duration = new Histogram({
    name: 'ward_http_request_duration_seconds',
    help: 'Time from request to response, by route template and status class',
    labelNames: ['method', 'route', 'status_class'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const refusals = new Counter({ name: 'ward_http_refusals_total', help: 'Enveloped error answers, by error code', labelNames: ['code'], registers: [registry] });

  return {
    registry,
    /** Counts every answer of `app`; register before the routes. */
    instrument(app: FastifyInstance): void {
      if (!app.hasReplyDecorator('errorCode')) app.decorateReply('errorCode', null);
      app.addHook('onResponse', async (request: FastifyRequest, reply: FastifyReply) => {
        const route = request.routeOptions.url ?? 'unmatched';
        const status = reply.statusCode;
        requests.inc({ method: request.method, route, status: String(status) });
        duration.observe({ method: request.method, route, status_class: `${Math.floor(status / 100)}xx` }, reply.elapsedTime / 1000);
        if (reply.errorCode) refusals.inc({ code: reply.errorCode });
      });
    },
    /** The exposition text and its content type. */
    async exposition(): Promise<{ contentType: string; body: string }> {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}

export type ServerMetrics = ReturnType<typeof createServerMetrics>;

export type ProbeOptions = {
  /** What else readiness needs beside "not shutting down": a problem, or undefined when ready. */
  readonly ready?: () => Promise<string | undefined>;
};

/**
 * `/metrics`, `/livez` and `/readyz` for the gateway and the console (the registry serves its own, with
 * its scopes), as a plugin over the `ward-http-kit` plugin's `httpMetrics`. Their metrics hold no
 * secrets but do describe traffic, so `/metrics` answers only a scraper on this machine (the peer
 * address, or the client a trusted proxy names, is loopback) and is a 404 to anyone else: scrape it on
 * the host, or from a sidecar.
 */
export const probesAndMetrics = fastifyPlugin<ProbeOptions>(
  async (app, options) => serveProbesAndMetrics(app, app.httpMetrics, options.ready),
  { name: 'ward-probes', fastify: '5.x', dependencies: ['ward-http-kit'], decorators: { fastify: ['httpMetrics'] } },
);

function serveProbesAndMetrics(app: FastifyInstance, metrics: ServerMetrics, ready: () => Promise<string | undefined> = async () => undefined): void {
  let draining = false;
  app.addHook('preClose', async () => {
    draining = true;
  });
  app.get('/livez', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const problem = draining ? 'shutting down' : await ready().catch((error: unknown) => (error instanceof Error ? error.message : String(error)));
    if (problem) return reply.code(503).send({ status: 'not_ready', reason: problem });
    return { status: 'ready' };
  });
  app.get('/metrics', async (request, reply) => {
    if (!isLoopback(request.ip.replace(/^::ffff:/, ''))) return reply.callNotFound();
    const { contentType, body } = await metrics.exposition();
    return reply.type(contentType).header('cache-control', 'no-store').send(body);
  });
}
