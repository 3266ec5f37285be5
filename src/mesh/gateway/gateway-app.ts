import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { Counter } from 'prom-client';
import { systemClock, type Clock } from '../../core/clock.ts';
import { firstHeader, httpKit, serverLogger } from '../../core/http/http-kit.ts';
import { createServerMetrics, probesAndMetrics } from '../../core/http/http-metrics.ts';
import { scanForPhi, scanHeadersForPhi } from '../../core/phi/index.ts';
import type { MeshConfig } from '../mesh-config.ts';
import type { MeshPrincipal } from '../runtime/auth.ts';
import type { DidResolver } from '../runtime/did/did-web.ts';
import { jsonRpcFrameworkErrorOptions } from '../runtime/http-errors.ts';
import { failure } from '../runtime/jsonrpc.ts';
import { isMeshRpcError, meshErrorObject, type JsonRpcErrorObject } from '../runtime/mesh-errors.ts';
import { MESH_BODY_LIMIT_BYTES, meshTransport } from '../runtime/mesh-transport.ts';
import { nextTraceparent, parseTraceparent } from '../runtime/trace-context.ts';
import { AgentFleet } from './agent-fleet.ts';
import type { AgentProcessSnapshot } from './agent-process.ts';
import { FORWARDED_REQUEST_HEADERS, forward, pickHeaders } from './forward.ts';
import { decodeBody, errorsFor, plainHttpStatus } from './gateway-errors.ts';
import { loadManifest, type AgentManifest } from './manifest.ts';
import { proxyWebSocket } from './ws-proxy.ts';

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

const header = (request: FastifyRequest, name: string): string | undefined => firstHeader(request.headers, name);

/**
 * Builds the on-demand gateway without listening (contract §10): `POST /rpc/{alias}` authenticates
 * the caller itself, refuses payloads carrying health data (spec rule 1), starts the alias and its
 * dependencies, and forwards JSON-RPC and SSE; `GET /rpc/{alias}/ws` proxies WebSocket;
 * `GET /health` lists every agent's state. Its own failures are always JSON-RPC envelopes.
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
    genReqId: () => randomUUID(),
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
  const principalOf = (request: FastifyRequest, body?: Buffer): Promise<MeshPrincipal> => app.meshAuthenticate(request.headers, body);
  const upstreamHeaders = (request: FastifyRequest, traceparent: string) => ({
    ...pickHeaders(request.headers, FORWARDED_REQUEST_HEADERS),
    traceparent,
    'x-request-id': request.id,
  });
  const answer = (reply: FastifyReply, status: number, body: unknown) => reply.code(status).type('application/json').send(body);
  const meshError = (error: unknown): JsonRpcErrorObject => {
    if (isMeshRpcError(error)) return error.toErrorObject();
    app.log.error({ err: error }, 'gateway failure');
    return meshErrorObject('INTERNAL_ERROR');
  };

  app.addHook('onRequest', async (request) => {
    const trace = parseTraceparent(header(request, 'traceparent'));
    if (trace) request.log = request.log.child({ trace_id: trace.traceId });
  });
  app.addHook('onClose', async () => {
    clearInterval(sweeper);
    await fleet.stopAll();
  });

  /**
   * Starts `alias` (and its dependencies) if need be. A first call waits seconds for that: the wait is
   * logged when it begins and ends, and the answer's Server-Timing names what was started.
   */
  const ensureAgent = async (request: FastifyRequest, reply: FastifyReply, alias: string): Promise<string> => {
    const waitingFor = fleet.notRunningFor(alias);
    if (waitingFor.length === 0) return fleet.ensure(alias);
    const waitStarted = performance.now();
    request.log.info({ alias, starting: waitingFor }, 'waiting for agents to start before forwarding');
    const url = await fleet.ensure(alias);
    const ms = Math.round(performance.now() - waitStarted);
    request.log.info({ alias, started: waitingFor, wait_ms: ms }, 'agents started; forwarding');
    reply.raw.setHeader('server-timing', `agent-start;dur=${ms};desc="${waitingFor.join(' ')}"`);
    return url;
  };

  // `/rpc/<alias>/` is the URL registered and advised: A2A clients find the card relative to it.
  const rpc = async (request: FastifyRequest<{ Params: { alias: string } }>, reply: FastifyReply) => {
    const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    try {
      await principalOf(request, body);
    } catch (error) {
      if (!isMeshRpcError(error)) throw error;
      reply.header('www-authenticate', 'Bearer error="invalid_token"');
      return answer(reply, error.httpStatus, failure(null, error.toErrorObject()));
    }
    const { alias } = request.params;
    const decoded = () => decodeBody(body);
    if (!fleet.has(alias)) return answer(reply, 200, errorsFor(decoded(), meshErrorObject('AGENT_UNKNOWN', undefined, { alias })));
    if (config.GATEWAY_PHI_GUARD) {
      const value = decoded();
      const findings = [...scanHeadersForPhi(request.headers), ...(value === undefined ? [] : scanForPhi(value))];
      if (findings.length > 0) return answer(reply, 200, errorsFor(value, meshErrorObject('PHI_DETECTED', undefined, { findings })));
    }
    let url: string;
    try {
      url = await ensureAgent(request, reply, alias);
    } catch (error) {
      return answer(reply, 200, errorsFor(decoded(), meshError(error)));
    }
    const agent = fleet.get(alias);
    reply.hijack();
    await forward({
      url: `${url}/`,
      method: 'POST',
      headers: upstreamHeaders(request, nextTraceparent(header(request, 'traceparent'))),
      body,
      response: reply.raw,
      timeoutMs: config.GATEWAY_REQUEST_TIMEOUT_MS,
      onStream: () => agent.holdStream(),
      onUnreachable: (error) => {
        request.log.warn({ alias, err: error }, 'agent unreachable');
        const envelope = errorsFor(decoded(), meshErrorObject('AGENT_UNAVAILABLE', 'The agent did not answer.', { alias }));
        reply.raw.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(envelope));
      },
    });
    agent.touch();
    return reply;
  };
  app.post<{ Params: { alias: string } }>('/rpc/:alias', rpc);
  app.post<{ Params: { alias: string } }>('/rpc/:alias/', rpc);

  // Public, as A2A clients expect (a card carries no secrets); starting the agent is what a call would do.
  app.get<{ Params: { alias: string } }>('/rpc/:alias/.well-known/agent-card.json', async (request, reply) => {
    const { alias } = request.params;
    if (!fleet.has(alias)) return answer(reply, 404, failure(null, meshErrorObject('AGENT_UNKNOWN', undefined, { alias })));
    try {
      const url = await ensureAgent(request, reply, alias);
      const version = header(request, 'a2a-version');
      const response = await fetch(`${url}/.well-known/agent-card.json`, {
        headers: version === undefined ? {} : { 'a2a-version': version },
        signal: AbortSignal.timeout(config.GATEWAY_REQUEST_TIMEOUT_MS),
      });
      reply.header('vary', 'A2A-Version');
      return answer(reply, response.status, await response.json());
    } catch (error) {
      return answer(reply, plainHttpStatus(error), failure(null, meshError(error)));
    }
  });

  const upstreamSockets = new WeakMap<FastifyRequest, { url: string; traceparent: string }>();
  app.get<{ Params: { alias: string } }>(
    '/rpc/:alias/ws',
    {
      websocket: true,
      preValidation: async (request, reply) => {
        const { alias } = request.params as { alias: string };
        try {
          await principalOf(request);
          const url = await fleet.ensure(alias);
          upstreamSockets.set(request, { url: `${url.replace(/^http/, 'ws')}/ws`, traceparent: nextTraceparent(header(request, 'traceparent')) });
        } catch (error) {
          return answer(reply, plainHttpStatus(error), failure(null, meshError(error)));
        }
      },
    },
    (socket, request) => {
      const { alias } = request.params;
      const target = upstreamSockets.get(request) as { url: string; traceparent: string };
      const release = fleet.get(alias).holdStream();
      proxyWebSocket(socket, target.url, upstreamHeaders(request, target.traceparent), release);
    },
  );

  await app.register(probesAndMetrics);

  // States are public (probes need them); log lines only go to an authenticated mesh caller, and in
  // production so do process ids, ports, log paths and errors (they map the host for an attacker).
  app.get('/health', async (request) => {
    const authenticated = await principalOf(request).then(
      () => true,
      () => false,
    );
    const agents = fleet.snapshot(authenticated ? (options.logTailLines ?? 20) : 0);
    return {
      name: 'Ward mesh gateway',
      status: 'ok',
      version: '0.1.0',
      uptime_s: Math.floor((clock.now().getTime() - startedAt) / 1000),
      agents: authenticated ? agents : agents.map(publicAgentView(config.REGISTRY_ENV === 'production')),
    };
  });

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

/** What an unauthenticated caller sees of an agent: never its log; in production not its process either. */
function publicAgentView(production: boolean) {
  return ({ log_tail: _tail, ...agent }: AgentProcessSnapshot & { log_tail?: unknown }) => {
    if (!production) return agent;
    const { pid: _pid, last_pid: _lastPid, port: _port, log_file: _logFile, last_error: _error, ...kept } = agent;
    return kept;
  };
}

/** The gateway's base URL as children and registrations see it. */
export function gatewayUrl(app: FastifyInstance, config: MeshConfig): string {
  const address = app.server.listening ? app.server.address() : null;
  const port = address && typeof address === 'object' ? address.port : config.GATEWAY_PORT;
  const host = config.MESH_HOST === '0.0.0.0' ? '127.0.0.1' : config.MESH_HOST;
  return `http://${host}:${port}`;
}
