import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyPluginOptions } from 'fastify';
import fastifyPlugin from 'fastify-plugin';

/**
 * A group of the registry's routes as a named Fastify plugin that declares what it needs: the shared
 * HTTP kit and the registry's services (`app.ward`), plus any `dependencies` of its own. A registry
 * assembled in the wrong order, or without one of them, then fails at start-up with the missing
 * plugin's name instead of at the first request. Encapsulated like a plain plugin: hooks and
 * decorators a route group adds stay its own.
 */
export function registryRoutePlugin<Options extends FastifyPluginOptions = Record<never, never>>(
  name: string,
  routes: FastifyPluginAsyncTypebox<Options>,
  needs: { dependencies?: string[] } = {},
): FastifyPluginAsyncTypebox<Options> {
  return fastifyPlugin(routes, {
    name,
    fastify: '5.x',
    encapsulate: true,
    decorators: { fastify: ['ward'] },
    dependencies: ['ward-http-kit', 'ward-registry-services', ...(needs.dependencies ?? [])],
  });
}
