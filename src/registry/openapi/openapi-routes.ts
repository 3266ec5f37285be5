import type { SwaggerOptions } from '@fastify/swagger';
import { Type } from 'typebox';
import type { Config } from '../../core/config.ts';
import { errorResponses } from '../../contract/schemas/common.ts';
import { registryRoutePlugin } from '../http/route-plugin.ts';
import { securitySchemes, withSecurity } from './operation-security.ts';
import { nameSharedComponents, type OpenApiDocument } from './shared-components.ts';

/** Every tag an operation may carry, declared once (an undeclared one fails test/registry/openapi.test.ts). */
export const OPENAPI_TAGS = [
  { name: 'agents', description: 'Agent records and their lifecycle' },
  { name: 'discovery', description: 'Finding agents by capability and trust posture' },
  { name: 'routing', description: 'Signed routing advice' },
  { name: 'trust', description: 'Trust anchors, bundles and the signing key' },
  { name: 'events', description: 'Registry changes: the live stream and the retained history' },
  { name: 'transparency', description: 'The append-only transparency ledger and its proofs' },
  { name: 'federation', description: 'Child registries, delegation statements and their status' },
  { name: 'openid-federation', description: 'OpenID Federation 1.0 entity configuration, fetch, list and resolve' },
  { name: 'billing', description: 'API keys, pricing tiers and usage (registry:admin)' },
  { name: 'operations', description: 'Probes, metrics, the caller and what operators read' },
  { name: 'computer-use', description: 'Model-driven runs against the console (registry:admin)' },
  { name: 'fhir', description: 'The FHIR R4 directory: Device, Endpoint, Organization and Provenance' },
  { name: 'metadata', description: 'Server metadata, keys, health and this document' },
] as const;

/** The OpenAPI 3.0.3 document is generated from the route schemas: one source for both. */
export function openApiOptions(config: Config): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Ward registry API',
        version: '1.0.0',
        description: `Trust registry for health-care AI agents (${config.REGISTRY_TIER} registry, ${config.REGISTRY_JURISDICTION}). Conventions, idempotency, preconditions and every operation by operationId: docs/api.md; error codes: docs/errors.md.`,
        contact: { name: 'Ward maintainers' },
        license: { name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' },
      },
      tags: [...OPENAPI_TAGS],
      components: { securitySchemes: securitySchemes(config.REGISTRY_AUTH_MODE) },
    },
    // Each operation's security, scope and 401/403 answers come from the one scope table (route-scopes.ts).
    transform: ({ schema, url, route }) => ({
      schema: withSecurity(schema as Parameters<typeof withSecurity>[0], [route.method].flat()[0] as string, url, config.REGISTRY_AUTH_MODE) as typeof schema,
      url,
    }),
    transformObject: (built) => ('openapiObject' in built ? nameSharedComponents(built.openapiObject as OpenApiDocument) : built.swaggerObject),
  };
}

export const openApiRoutes = registryRoutePlugin('ward-openapi-routes', async (app) => {
  app.get(
    '/v1/openapi.json',
    {
      schema: {
        tags: ['metadata'],
        operationId: 'getOpenApiDocument',
        summary: 'This OpenAPI 3.0.3 document',
        description: 'The OpenAPI 3.0.3 description of this registry, generated from the same route schemas it validates and serialises with (public).',
        response: { 200: Type.Object({}, { additionalProperties: true, description: 'An OpenAPI 3.0.3 document' }), ...errorResponses() },
      },
    },
    // The address is read per answer: a registry told to listen on port 0 learns its own only once listening.
    async () => {
      const { openapi, info, ...rest } = app.swagger() as unknown as Record<string, unknown>;
      return { openapi, info, servers: [{ url: app.ward.baseUrl(), description: 'This registry (REGISTRY_PUBLIC_URL, else its listen address)' }], ...rest };
    },
  );
}, { dependencies: ['@fastify/swagger'] });
