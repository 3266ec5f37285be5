import type { FastifyInstance } from 'fastify';
import { systemClock, type Clock } from '../core/clock.ts';
import type { Storage } from './storage/database.ts';
import type { EventRoutesOptions } from './events/event-routes.ts';
import { edgePlugin } from './plugins/edge-plugin.ts';
import { jobsPlugin } from './plugins/jobs-plugin.ts';
import { closeOpened, type OpenedResources } from './plugins/opened-resources.ts';
import { createRegistryFastify, type RegistryFastifyOptions } from './plugins/registry-fastify.ts';
import { routesPlugin } from './plugins/routes-plugin.ts';
import { servicesPlugin } from './plugins/services-plugin.ts';

export { BODY_LIMIT_BYTES } from './plugins/registry-fastify.ts';

export type BuildRegistryOptions = RegistryFastifyOptions & {
  /** An already open storage (tests share one); otherwise opened from the config and closed with the app. */
  storage?: Storage;
  clock?: Clock;
  /** Event-stream tunables (ping interval, stall timeout…); tests shorten them. */
  events?: EventRoutesOptions;
};

/**
 * Builds the registry as a ready Fastify app without listening (house style: build and listen are
 * separate). The app is a composition of plugins, each depending on the one before: the services
 * (storage opened and migrated, the signing key loaded or created), the request pipeline, the routes,
 * and the background jobs with the order of shutdown.
 */
export async function buildRegistry(options: BuildRegistryOptions): Promise<FastifyInstance> {
  const clock = options.clock ?? systemClock;
  const startedAt = clock.now();
  const opened: OpenedResources = {};
  try {
    const app = createRegistryFastify(options);
    await app.register(servicesPlugin, { config: options.config, storage: options.storage, clock, startedAt, opened });
    await app.register(edgePlugin);
    await app.register(routesPlugin, { events: options.events ?? {} });
    await app.register(jobsPlugin);
    await app.ready();
    return app;
  } catch (error) {
    await closeOpened(opened);
    throw error;
  }
}
