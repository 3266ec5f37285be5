import { Type } from 'typebox';
import { registryUri } from '../../core/ids.ts';
import type { FastifyInstance } from 'fastify';
import { JwksSchema, StringEnum, errorResponses } from '../../contract/schemas/common.ts';
import { registryRoutePlugin } from '../http/route-plugin.ts';

const ServerMetadata = Type.Object(
  {
    issuer: Type.String({ format: 'uri' }),
    registry_id: Type.String(),
    tier: StringEnum(['root', 'sovereign', 'organisational'] as const),
    jurisdiction: Type.String(),
    api_base_url: Type.String({ format: 'uri' }),
    jwks_uri: Type.String({ format: 'uri' }),
    registration_endpoint: Type.String(),
    discovery_endpoint: Type.String(),
    routing_endpoint: Type.String(),
    events_endpoint: Type.String(),
    trust_anchors_endpoint: Type.String(),
    supported_auth_methods: Type.Array(StringEnum(['jwt', 'mtls', 'dpop'] as const)),
    signed_metadata: Type.String({ description: 'Compact JWS over this object without signed_metadata' }),
  },
  { title: 'ServerMetadata' },
);


/** The metadata object without its signature (spec: Server metadata; contract §5). */
export function serverMetadata(ward: FastifyInstance['ward']) {
  const base = ward.baseUrl();
  const { config } = ward;
  return {
    issuer: base,
    registry_id: registryUri(config.REGISTRY_JURISDICTION, config.REGISTRY_NAME),
    tier: config.REGISTRY_TIER,
    jurisdiction: config.REGISTRY_JURISDICTION,
    api_base_url: base,
    jwks_uri: `${base}/.well-known/jwks.json`,
    registration_endpoint: '/v1/agents',
    discovery_endpoint: '/v1/discover',
    routing_endpoint: '/v1/route',
    events_endpoint: '/v1/events/stream',
    trust_anchors_endpoint: '/v1/trust/anchors',
    // `disabled` accepts no credential of these kinds, so it advertises none.
    supported_auth_methods: config.REGISTRY_AUTH_MODE === 'disabled' ? [] : [config.REGISTRY_AUTH_MODE],
  };
}

/** Server metadata and the registry's JWKS; no authentication (spec, Conventions 5). */
export const metadataRoutes = registryRoutePlugin('ward-metadata-routes', async (app) => {
  // Signed once per base URL: the metadata only changes when the address does.
  // ...and the signing key, which changes on rotation.
  let cached: { base: string; kid: string; body: ReturnType<typeof serverMetadata> & { signed_metadata: string } } | undefined;

  async function signedMetadata() {
    const base = app.ward.baseUrl();
    await app.ward.signer.refreshIfStale();
    const kid = app.ward.signer.kid;
    if (cached?.base !== base || cached.kid !== kid) {
      const metadata = serverMetadata(app.ward);
      cached = { base, kid, body: { ...metadata, signed_metadata: await app.ward.signer.sign(metadata) } };
    }
    return cached.body;
  }

  const schema = {
    tags: ['metadata'],
    summary: 'Server metadata',
    description: "This registry's identity, tier, jurisdiction, endpoints and accepted authentication, signed by its current key (contract §5).",
    response: { 200: ServerMetadata, ...errorResponses() },
  };
  app.get('/.well-known/agent-registry', { schema: { ...schema, operationId: 'getWellKnownServerMetadata', summary: 'Server metadata (well-known address, public)' } }, signedMetadata);
  app.get('/v1/metadata', { schema: { ...schema, operationId: 'getServerMetadata' } }, signedMetadata);
  app.get(
    '/.well-known/jwks.json',
    {
      schema: {
        tags: ['metadata'],
        operationId: 'getRegistryJwks',
        summary: "The registry's public signing keys",
        description: 'The JWKS of every key this registry signs with or has signed with and still publishes (RFC 7517).',
        response: { 200: JwksSchema, ...errorResponses() },
      },
    },
    async () => {
      await app.ward.signer.refreshIfStale();
      return app.ward.signer.jwks();
    },
  );
  app.get(
    '/health',
    {
      schema: {
        tags: ['metadata'],
        operationId: 'getHealth',
        summary: 'Liveness and storage readiness',
        description: 'ok, with the storage backend in use (sqlite or postgres).',
        response: { 200: Type.Object({ status: Type.Literal('ok'), storage: Type.String() }), ...errorResponses(503) },
      },
    },
    async () => ({ status: 'ok' as const, storage: app.ward.storage.backend }),
  );
});
