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

/** Closes the apps once on the first SIGINT or SIGTERM, then exits. */
export function closeOnSignals(apps: readonly FastifyInstance[]): void {
  let closing = false;
  const close = (signal: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    for (const app of apps) app.log.info({ signal }, 'shutting down');
    Promise.allSettled(apps.map((app) => app.close())).then(() => process.exit(0));
  };
  process.once('SIGINT', close);
  process.once('SIGTERM', close);
}
