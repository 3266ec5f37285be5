/**
 * The gateway's routes (contract §10) as the `ward-gateway-routes` plugin, over `ward-mesh-transport`
 * (`meshAuthenticate`) and the fleet (`meshFleet`): `POST /rpc/{alias}` authenticates the caller,
 * refuses payloads carrying health data (spec rule 1), starts the alias and its dependencies and
 * forwards JSON-RPC and SSE; the card; `GET /rpc/{alias}/ws` proxies WebSocket; `GET /health` lists
 * every agent's state. Its own failures are always JSON-RPC envelopes.
 */
import { authChallenge } from '../../core/http/auth-challenge.ts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { Clock } from '../../core/clock.ts';
import { firstHeader } from '../../core/http/http-kit.ts';
import { scanForPhi, scanHeadersForPhi } from '../../core/phi/index.ts';
import type { MeshConfig } from '../mesh-config.ts';
import type { MeshPrincipal } from '../runtime/auth.ts';
import { failure } from '../runtime/jsonrpc.ts';
import { isMeshRpcError, meshErrorObject, type JsonRpcErrorObject } from '../runtime/mesh-errors.ts';
import { nextTraceparent } from '../runtime/trace-context.ts';
import type { AgentProcessSnapshot } from './agent-process.ts';
import { FORWARDED_REQUEST_HEADERS, forward, pickHeaders } from './forward.ts';
import { decodeBody, errorsFor, plainHttpStatus } from './gateway-errors.ts';
import { proxyWebSocket } from './ws-proxy.ts';

export type GatewayRouteOptions = {
  readonly config: MeshConfig;
  readonly clock: Clock;
  /** Epoch milliseconds, for `uptime_s`. */
  readonly startedAt: number;
  /** Lines of each agent's log in `/health` for an authenticated caller. */
  readonly logTailLines: number;
};

/** The `ward-gateway-routes` plugin; it fails at start-up without `ward-mesh-transport` or the fleet. */
export const gatewayRoutes = fastifyPlugin<GatewayRouteOptions>(
  async (app, options) => {
    const { config, clock, startedAt, logTailLines } = options;
    const fleet = app.meshFleet;
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
        reply.header('www-authenticate', authChallenge({ scheme: 'Bearer', error: 'invalid_token' }));
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
        headers: upstreamHeaders(request, nextTraceparent(firstHeader(request.headers, 'traceparent'))),
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
        const version = firstHeader(request.headers, 'a2a-version');
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
            upstreamSockets.set(request, { url: `${url.replace(/^http/, 'ws')}/ws`, traceparent: nextTraceparent(firstHeader(request.headers, 'traceparent')) });
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

    // States are public (probes need them); log lines only go to an authenticated mesh caller, and in
    // production so do process ids, ports, log paths and errors (they map the host for an attacker).
    app.get('/health', async (request) => {
      const authenticated = await principalOf(request).then(
        () => true,
        () => false,
      );
      const agents = fleet.snapshot(authenticated ? logTailLines : 0);
      return {
        name: 'Ward mesh gateway',
        status: 'ok',
        version: '0.1.0',
        uptime_s: Math.floor((clock.now().getTime() - startedAt) / 1000),
        agents: authenticated ? agents : agents.map(publicAgentView(config.REGISTRY_ENV === 'production')),
      };
    });
  },
  { name: 'ward-gateway-routes', fastify: '5.x', dependencies: ['ward-mesh-transport'], decorators: { fastify: ['meshAuthenticate', 'meshFleet'] } },
);

/** What an unauthenticated caller sees of an agent: never its log; in production not its process either. */
function publicAgentView(production: boolean) {
  return ({ log_tail: _tail, ...agent }: AgentProcessSnapshot & { log_tail?: unknown }) => {
    if (!production) return agent;
    const { pid: _pid, last_pid: _lastPid, port: _port, log_file: _logFile, last_error: _error, ...kept } = agent;
    return kept;
  };
}
