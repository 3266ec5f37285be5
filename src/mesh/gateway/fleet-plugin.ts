/**
 * The `ward-agent-fleet` plugin: the gateway's agent processes decorated as `meshFleet`, their state
 * changes counted and logged, the idle sweep on a timer, and every agent stopped when the app closes.
 */
import fastifyPlugin from 'fastify-plugin';
import { Counter } from 'prom-client';
import type { Clock } from '../../core/clock.ts';
import type { MeshConfig } from '../mesh-config.ts';
import { AgentFleet } from './agent-fleet.ts';
import type { AgentManifest } from './manifest.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The gateway's agents (only on the gateway app). */
    meshFleet: AgentFleet;
  }
}

export type FleetPluginOptions = {
  readonly config: MeshConfig;
  readonly manifest: AgentManifest;
  readonly clock: Clock;
  /** The gateway's own URL, known once it listens. */
  readonly gatewayUrl: () => string;
  /** An agent's public URL when it is not `<gateway>/rpc/<alias>/` (a root listener's). */
  readonly publicUrl?: (alias: string) => string | undefined;
  /** The environment children inherit (default `process.env`). */
  readonly childEnv?: Readonly<Record<string, string | undefined>> | undefined;
  /** `false`: no automatic idle sweep (tests call `meshFleet.sweepIdle()` themselves). */
  readonly idleSweep?: false | undefined;
};

/** How often the sweep runs: a quarter of the shortest idle timeout, between 100 ms and 30 s. */
function sweepInterval(config: MeshConfig, manifest: AgentManifest): number {
  const idleTimeouts = [config.GATEWAY_IDLE_TIMEOUT_MS, ...[...manifest.agents.values()].map((agent) => agent.idleTimeoutMs ?? 0)].filter((ms) => ms > 0);
  return Math.min(30_000, Math.max(100, Math.floor(Math.min(...idleTimeouts, 120_000) / 4)));
}

/** The `ward-agent-fleet` plugin; it needs `ward-http-kit` (its counter goes with the server's metrics). */
export const agentFleetPlugin = fastifyPlugin<FleetPluginOptions>(
  async (app, options) => {
    const { config, manifest } = options;
    const agentStates = new Counter({
      name: 'ward_gateway_agent_state_changes_total',
      help: 'Agent processes entering a state (starting, ready, failed, stopped…), by alias',
      labelNames: ['alias', 'state'],
      registers: [app.httpMetrics.registry],
    });
    const fleet = new AgentFleet({
      manifest,
      config,
      clock: options.clock,
      gatewayUrl: options.gatewayUrl,
      ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
      ...(options.childEnv ? { baseEnv: options.childEnv } : {}),
      onEvent: (event) => {
        agentStates.inc({ alias: event.alias, state: event.state });
        app.log.info({ alias: event.alias, state: event.state, ...event.detail }, 'agent state');
      },
    });
    app.decorate('meshFleet', fleet);
    const sweeper = setInterval(() => {
      if (options.idleSweep === false) return;
      fleet.sweepIdle().catch((error: unknown) => app.log.warn({ err: error }, 'idle sweep failed'));
    }, sweepInterval(config, manifest));
    sweeper.unref();
    app.addHook('onClose', async () => {
      clearInterval(sweeper);
      await fleet.stopAll();
    });
  },
  { name: 'ward-agent-fleet', fastify: '5.x', dependencies: ['ward-http-kit'], decorators: { fastify: ['httpMetrics'] } },
);
