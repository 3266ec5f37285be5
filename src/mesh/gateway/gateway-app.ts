import { requestIdFor } from '../../core/http/request-id.ts';
import Fastify, { type FastifyInstance } from 'fastify';
import { Counter } from 'prom-client';
import { systemClock, type Clock } from '../../core/clock.ts';
import { firstHeader, httpKit, serverLogger } from '../../core/http/http-kit.ts';
import { createServerMetrics, probesAndMetrics } from '../../core/http/http-metrics.ts';
import type { MeshConfig } from '../mesh-config.ts';
import type { DidResolver } from '../runtime/did/did-web.ts';
import { jsonRpcFrameworkErrorOptions } from '../runtime/http-errors.ts';
import { MESH_BODY_LIMIT_BYTES, meshTransport } from '../runtime/mesh-transport.ts';
import { parseTraceparent } from '../runtime/trace-context.ts';
import { AgentFleet } from './agent-fleet.ts';
import { gatewayRoutes } from './gateway-routes.ts';
import { loadManifest, type AgentManifest } from './manifest.ts';

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
};

declare module 'fastify' {
  interface FastifyInstance {
    /** The gateway's agents (only on the gateway app). */
    meshFleet: AgentFleet;
  }
}

/**
 * Builds the on-demand gateway without listening (contract §10): the HTTP kit, the fleet of agent
 * processes (`meshFleet`), the mesh transport, its routes (`gateway-routes.ts`: JSON-RPC, SSE and
 * WebSocket forwarding, the card, `/health`), the probes and the idle sweep.
 */
export async function buildGateway(options: BuildGatewayOptions): Promise<FastifyInstance> {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  const startedAt = clock.now().getTime();
  const manifest = options.manifest ?? loadManifest(config.MESH_MANIFEST);
  const app = Fastify({
    logger: serverLogger(options.logger === false ? false : { level: config.MESH_LOG_LEVEL, base: { component: 'gateway' } }),
    bodyLimit: MESH_BODY_LIMIT_BYTES,
    ...jsonRpcFrameworkErrorOptions,
    genReqId: (request) => requestIdFor(request.headers),
  });
  const metrics = createServerMetrics('gateway');
  const agentStates = new Counter({
    name: 'ward_gateway_agent_state_changes_total',
    help: 'Agent processes entering a state (starting, ready, failed, stopped…), by alias',
    labelNames: ['alias', 'state'],
    registers: [metrics.registry],
  });
  await app.register(httpKit, { metrics });
  const fleet = new AgentFleet({
    manifest,
    config,
    clock,
    gatewayUrl: () => gatewayUrl(app, config),
    ...(options.childEnv ? { baseEnv: options.childEnv } : {}),
    onEvent: (event) => {
      agentStates.inc({ alias: event.alias, state: event.state });
      app.log.info({ alias: event.alias, state: event.state, ...event.detail }, 'agent state');
    },
  });
  app.decorate('meshFleet', fleet);
  await app.register(meshTransport, { config, clock, didResolver: options.didResolver, notFoundMessage: 'No such path; JSON-RPC goes to POST /rpc/{alias}.' });
  app.addHook('onRequest', async (request) => {
    const trace = parseTraceparent(firstHeader(request.headers, 'traceparent'));
    if (trace) request.log = request.log.child({ trace_id: trace.traceId });
  });
  app.addHook('onClose', async () => {
    clearInterval(sweeper);
    await fleet.stopAll();
  });

  await app.register(gatewayRoutes, { config, clock, startedAt, logTailLines: options.logTailLines ?? 20 });
  await app.register(probesAndMetrics);

  const idleTimeouts = [config.GATEWAY_IDLE_TIMEOUT_MS, ...[...manifest.agents.values()].map((agent) => agent.idleTimeoutMs ?? 0)].filter((ms) => ms > 0);
  const sweepEvery = Math.min(30_000, Math.max(100, Math.floor(Math.min(...idleTimeouts, 120_000) / 4)));
  const sweeper = setInterval(() => {
    if (options.idleSweep === false) return;
    fleet.sweepIdle().catch((error: unknown) => app.log.warn({ err: error }, 'idle sweep failed'));
  }, sweepEvery);
  sweeper.unref();
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
