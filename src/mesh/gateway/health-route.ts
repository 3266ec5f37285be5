/**
 * The gateway's `GET /health`: every agent's state. States are public (probes need them); log lines
 * only go to an authenticated mesh caller, and in production so do process ids, ports, log paths and
 * errors (they map the host for an attacker).
 */
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../core/clock.ts';
import type { MeshConfig } from '../mesh-config.ts';
import type { AgentProcessSnapshot } from './agent-process.ts';

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
}

/** What an unauthenticated caller sees of an agent: never its log; in production not its process either. */
function publicAgentView(production: boolean) {
  return ({ log_tail: _tail, ...agent }: AgentProcessSnapshot & { log_tail?: unknown }) => {
    if (!production) return agent;
    const { pid: _pid, last_pid: _lastPid, port: _port, log_file: _logFile, last_error: _error, ...kept } = agent;
    return kept;
  };
}
