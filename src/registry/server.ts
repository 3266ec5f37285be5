import type { FastifyInstance } from 'fastify';
import type { Config } from '../core/config.ts';
import { buildRegistry } from './app.ts';

/**
 * Starts the registry: build, listen, and close gracefully on SIGINT/SIGTERM (in-flight requests
 * finish, storage closes). Logs the address it listens on (contract §1).
 */
export async function startRegistry(config: Config): Promise<FastifyInstance> {
  const app = await buildRegistry({ config });
  await app.listen({ host: config.REGISTRY_HOST, port: config.REGISTRY_PORT });
  app.log.info({ url: app.ward.baseUrl(), storage: app.ward.storage.backend }, 'registry listening');
  return app;
}

/** How long a graceful shutdown may take before the process exits anyway. */
export const SHUTDOWN_GRACE_MS = 15_000;

/**
 * Closes the apps once on the first SIGINT or SIGTERM, then exits: new connections are refused at
 * once, `/readyz` turns 503 for whoever still asks, in-flight requests finish, event streams end with a
 * reconnect hint, the prober and heartbeat stop, the gateway stops its agents, storage closes. A
 * request that never finishes does not hold the process: after {@link SHUTDOWN_GRACE_MS} it exits with
 * status 1 and says so.
 */
export function closeOnSignals(apps: readonly FastifyInstance[], graceMs = SHUTDOWN_GRACE_MS): void {
  let closing = false;
  const close = (signal: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    for (const app of apps) app.log.info({ signal }, 'shutting down');
    const deadline = setTimeout(() => {
      for (const app of apps) app.log.error({ grace_ms: graceMs }, 'shutdown did not finish in time; exiting');
      process.exit(1);
    }, graceMs);
    deadline.unref();
    Promise.allSettled(apps.map((app) => app.close())).then(() => process.exit(0));
  };
  process.once('SIGINT', close);
  process.once('SIGTERM', close);
}
