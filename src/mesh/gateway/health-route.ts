/**
 * The gateway's `GET /health`: every agent's state. States are public (probes need them); log lines
 * only go to an authenticated mesh caller, and in production so do process ids, ports, log paths and
 * errors (they map the host for an attacker).
 */
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../core/clock.ts';
import type { MeshConfig } from '../mesh-config.ts';
import { failure } from '../runtime/jsonrpc.ts';
import { meshErrorObject } from '../runtime/mesh-errors.ts';
import type { AgentProcessSnapshot } from './agent-process.ts';
import { answerJson } from './gateway-errors.ts';

/** States in which a call to the agent is expected to be served (a stopped agent starts on first use). */
const SERVABLE_STATES = new Set(['stopped', 'starting', 'running', 'stopping']);

export type HealthRouteOptions = {
  readonly config: MeshConfig;
  readonly clock: Clock;
  /** Epoch milliseconds, for `uptime_s`. */
  readonly startedAt: number;
  /** Lines of each agent's log in `/health` for an authenticated caller. */
  readonly logTailLines: number;
};

/** Registers `GET /health` on the gateway app. */
export function registerHealthRoute(app: FastifyInstance, options: HealthRouteOptions): void {
  const { config, clock, startedAt, logTailLines } = options;
  app.get('/health', async (request) => {
    const authenticated = await app.meshAuthenticate(request.headers).then(
      () => true,
      () => false,
    );
    const agents = app.meshFleet.snapshot(authenticated ? logTailLines : 0);
    return {
      name: 'Ward mesh gateway',
      status: 'ok',
      version: '0.1.0',
      uptime_s: Math.floor((clock.now().getTime() - startedAt) / 1000),
      agents: authenticated ? agents : agents.map(publicAgentView(config.REGISTRY_ENV === 'production')),
    };
  });
  // One agent's health as the registry's prober reads it (its endpoints' `health_url`): answered from
  // what the gateway knows, never by starting the agent, so probes neither start agents nor keep them
  // running. 200 while a call would be served (stopped agents start on first use); 503 while it is
  // failing (failed to start, or crashed and waiting to restart).
  app.get<{ Params: { alias: string } }>('/rpc/:alias/health', async (request, reply) => {
    const { alias } = request.params;
    if (!app.meshFleet.has(alias)) return answerJson(reply, 404, failure(null, meshErrorObject('AGENT_UNKNOWN', undefined, { alias })));
    const agent = app.meshFleet.snapshot(0).find((entry) => entry.alias === alias) as AgentProcessSnapshot;
    const servable = SERVABLE_STATES.has(agent.state);
    const { log_tail: _tail, ...view } = publicAgentView(config.REGISTRY_ENV === 'production')(agent) as AgentProcessSnapshot;
    reply.header('cache-control', 'no-store');
    return answerJson(reply, servable ? 200 : 503, { status: servable ? 'ok' : 'unavailable', ...view });
  });
}

/** What an unauthenticated caller sees of an agent: never its log; in production not its process either. */
function publicAgentView(production: boolean) {
  return ({ log_tail: _tail, ...agent }: AgentProcessSnapshot & { log_tail?: unknown }) => {
    if (!production) return agent;
    const { pid: _pid, last_pid: _lastPid, port: _port, log_file: _logFile, last_error: _error, ...kept } = agent;
    return kept;
  };
}
