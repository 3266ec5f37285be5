import { requestIdFor } from '../../core/http/request-id.ts';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { systemClock, type Clock } from '../../core/clock.ts';
import { firstHeader, httpKit, requestLogMode, serverLogger } from '../../core/http/http-kit.ts';
import { createServerMetrics, probesAndMetrics } from '../../core/http/http-metrics.ts';
import type { MeshConfig } from '../mesh-config.ts';
import type { DidResolver } from '../runtime/did/did-web.ts';
import { jsonRpcFrameworkErrorOptions } from '../runtime/http-errors.ts';
import { MESH_BODY_LIMIT_BYTES, meshTransport } from '../runtime/mesh-transport.ts';
import { parseTraceparent } from '../runtime/trace-context.ts';
import { agentProxy } from './agent-proxy.ts';
import { agentFleetPlugin } from './fleet-plugin.ts';
import { gatewayRoutes } from './gateway-routes.ts';
import { loadManifest, type AgentManifest } from './manifest.ts';
import { rootListeners } from './root-listeners.ts';

export type BuildGatewayOptions = {
  readonly config: MeshConfig;
  /** Default: MESH_MANIFEST, else the shipped manifest. */
  readonly manifest?: AgentManifest;
  readonly clock?: Clock;
  /** `false` silences logging (tests). */
  readonly logger?: false;
  /** The environment children inherit (default `process.env`). */
  readonly childEnv?: Readonly<Record<string, string | undefined>>;
  readonly didResolver?: DidResolver;
  /** Lines of each agent's log in `/health` (default 20). */
  readonly logTailLines?: number;
  /** `false`: no automatic idle sweep (tests call `meshFleet.sweepIdle()` themselves). */
  readonly idleSweep?: false;
  /** Filled with the root listeners' URLs by alias (`GATEWAY_ROOT_LISTENERS`) once they listen. */
  readonly rootUrls?: Map<string, string>;
};

/**
 * Builds the on-demand gateway without listening (contract §10), as plugins: the HTTP kit, the fleet
 * of agent processes (`ward-agent-fleet`: `meshFleet`, the idle sweep), the mesh transport, the proxy
 * to the agents (`ward-agent-proxy`), its routes (`ward-gateway-routes`: JSON-RPC, SSE and WebSocket
 * forwarding, the card, `/health`), the probes, and the root listeners (`ward-root-listeners`: agents at
 * the root of listeners of their own, `GATEWAY_ROOT_LISTENERS`).
 */
export async function buildGateway(options: BuildGatewayOptions): Promise<FastifyInstance> {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  const startedAt = clock.now().getTime();
  const manifest = options.manifest ?? loadManifest(config.MESH_MANIFEST);
  const rootUrls = options.rootUrls ?? new Map<string, string>();
  const app = Fastify({
    // One request line, from the HTTP kit, at the level MESH_REQUEST_LOG sets.
    logController: new LogController({ disableRequestLogging: true }),
    logger: serverLogger(options.logger === false ? false : { level: config.MESH_LOG_LEVEL, base: { component: 'gateway' } }),
    bodyLimit: MESH_BODY_LIMIT_BYTES,
    ...jsonRpcFrameworkErrorOptions,
    genReqId: (request) => requestIdFor(request.headers),
  });
  await app.register(httpKit, { metrics: createServerMetrics('gateway'), requestLog: requestLogMode(config.MESH_REQUEST_LOG, config.REGISTRY_ENV) });
  await app.register(agentFleetPlugin, {
    config,
    manifest,
    clock,
    gatewayUrl: () => gatewayUrl(app, config),
    publicUrl: (alias) => rootUrls.get(alias),
    childEnv: options.childEnv,
    idleSweep: options.idleSweep,
  });
  await app.register(meshTransport, { config, clock, didResolver: options.didResolver, notFoundMessage: 'No such path; JSON-RPC goes to POST /rpc/{alias}.' });
  app.addHook('onRequest', async (request) => {
    const trace = parseTraceparent(firstHeader(request.headers, 'traceparent'));
    if (trace) request.log = request.log.child({ trace_id: trace.traceId });
  });
  await app.register(agentProxy, { timeoutMs: config.GATEWAY_REQUEST_TIMEOUT_MS });
  await app.register(gatewayRoutes, { config, clock, startedAt, logTailLines: options.logTailLines ?? 20 });
  await app.register(probesAndMetrics);
  await app.register(rootListeners, { config, rootUrls });
  await app.ready();
  return app;
}

/** The gateway's base URL as children and registrations see it. */
export function gatewayUrl(app: FastifyInstance, config: MeshConfig): string {
  const address = app.server.listening ? app.server.address() : null;
  const port = address && typeof address === 'object' ? address.port : config.GATEWAY_PORT;
  const host = config.MESH_HOST === '0.0.0.0' ? '127.0.0.1' : config.MESH_HOST;
  return `http://${host}:${port}`;
}
