import type { FastifyInstance } from 'fastify';
import type { Config } from '../core/config.ts';
import { buildRegistry } from './app.ts';

/**
 * Starts the registry: build and listen (`ward registry` closes it gracefully on SIGINT/SIGTERM:
 * cli/serving-command.ts). Logs the address it listens on (contract §1).
 */
export async function startRegistry(config: Config): Promise<FastifyInstance> {
  const app = await buildRegistry({ config });
  await app.listen({ host: config.REGISTRY_HOST, port: config.REGISTRY_PORT });
  app.log.info({ url: app.ward.baseUrl(), storage: app.ward.storage.backend }, 'registry listening');
  return app;
}
