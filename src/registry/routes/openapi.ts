import type { SwaggerOptions } from '@fastify/swagger';
import type { Config } from '../../core/config.ts';
import { registryRoutePlugin } from '../http/route-plugin.ts';

/** The OpenAPI 3.0.3 document is generated from the route schemas: one source for both. */
export function openApiOptions(config: Config): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Ward registry API',
        version: '1.0.0',
        description: `Trust registry for health-care AI agents (${config.REGISTRY_TIER} registry, ${config.REGISTRY_JURISDICTION}).`,
      },
      tags: [
        { name: 'agents', description: 'Agent records and their lifecycle' },
        { name: 'discovery', description: 'Finding agents by capability and trust posture' },
        { name: 'routing', description: 'Signed routing advice' },
        { name: 'trust', description: 'Trust anchors and bundles' },
        { name: 'metadata', description: 'Server metadata, keys and health' },
        { name: 'fhir', description: 'The FHIR R4 directory: agents as Device and Endpoint, owners as Organization, changes as Provenance' },
      ],
    },
  };
}

export const openApiRoutes = registryRoutePlugin('ward-openapi-routes', async (app) => {
  app.get(
    '/v1/openapi.json',
    { schema: { tags: ['metadata'], summary: 'This OpenAPI 3.0.3 document' } },
    async () => app.swagger(),
  );
}, { dependencies: ['@fastify/swagger'] });
