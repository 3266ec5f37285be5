import type { FastifyInstance } from 'fastify';
import type { WardCommand } from './command.ts';

/** How long a graceful shutdown may take before the process exits anyway. */
export const SHUTDOWN_GRACE_MS = 15_000;

/**
 * Closes the apps once on the first SIGINT or SIGTERM (or other event of `alsoOn`), then exits: new
 * connections are refused at once, `/readyz` turns 503 for whoever still asks, in-flight requests
 * finish, event streams end with a reconnect hint, the prober and heartbeat stop, the gateway stops
 * its agents, storage closes. A request that never finishes does not hold the process: after
 * `graceMs` (default {@link SHUTDOWN_GRACE_MS}) it exits with status 1 and says so.
 */
export function closeOnSignals(apps: readonly FastifyInstance[], graceMs = SHUTDOWN_GRACE_MS, alsoOn: readonly 'disconnect'[] = [], drain?: Drain): void {
  let closing = false;
  const shut = (signal: string) => {
    for (const app of apps) app.log.info({ signal }, 'shutting down');
    const deadline = setTimeout(() => {
      for (const app of apps) app.log.error({ grace_ms: graceMs }, 'shutdown did not finish in time; exiting');
      process.exit(1);
    }, graceMs);
    deadline.unref();
    Promise.allSettled(apps.map((app) => app.close())).then(() => process.exit(0));
  };
  const close = (signal: string) => {
    if (closing) return;
    closing = true;
    if (!drain || drain.ms <= 0) return shut(signal);
    // Not ready, still serving: the balancer's health check takes the instance out, then it closes.
    drain.start();
    for (const app of apps) app.log.info({ signal, drain_ms: drain.ms }, 'draining: /readyz answers 503 until shutdown');
    setTimeout(() => shut(signal), drain.ms);
  };
  process.once('SIGINT', close);
  process.once('SIGTERM', close);
  for (const event of alsoOn) process.once(event, () => close(event));
}

/** A wait before closing, with readiness already failing (REGISTRY_SHUTDOWN_DRAIN_MS). */
export type Drain = { ms: number; start: () => void };

/** What a serving command started: the apps to close on a signal, how long closing may take, and the drain before it. */
export type Serving = { apps: readonly FastifyInstance[]; graceMs?: number; drain?: Drain };

/**
 * A command that takes no arguments and serves until SIGINT or SIGTERM (`ward registry`, `console`,
 * `gateway`, `start`): `start` brings its servers up and says where they listen; then
 * {@link closeOnSignals} closes them.
 */
export function servingCommand(name: string, usage: string, start: () => Promise<Serving>): WardCommand {
  return {
    name,
    usage,
    takesArguments: false,
    async run() {
      const serving = await start();
      closeOnSignals(serving.apps, serving.graceMs, [], serving.drain);
      return 'running';
    },
  };
}
