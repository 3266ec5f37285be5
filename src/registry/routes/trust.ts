import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { WardError } from '../../core/errors.ts';
import { parseAgentId } from '../../core/ids.ts';
import { TrustAnchorSchema, TrustBundleQuery, TrustBundleSchema } from '../schemas/discovery-schemas.ts';
import { errorResponses } from '../schemas/common.ts';
import { agentTrustBundle, registryTrustBundle } from '../trust/trust-bundle.ts';

const REGISTRY_URI = /^registry:\/\/[a-z]{2}\/registries\/[a-z0-9][a-z0-9-]{0,62}$/;
const ANCHOR_ROLES = { root: 'root', sovereign: 'sovereign_registry', organisational: 'organisation' } as const;

/** Trust anchors and bundles (contract §5). */
export const trustRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const ward = app.ward;

  app.get(
    '/v1/trust/bundle',
    {
      schema: {
        tags: ['trust'],
        summary: 'The trust bundle of an agent or of this registry',
        querystring: TrustBundleQuery,
        response: { 200: TrustBundleSchema, ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      const { subject } = request.query;
      const context = { signer: ward.signer, registryId: ward.registryId, ...ward.trustChain(), now: ward.clock.now() };
      if (subject === ward.registryId) return registryTrustBundle(context);
      if (REGISTRY_URI.test(subject)) throw new WardError('REGISTRY_NOT_FOUND', undefined, { subject });
      const parsed = subject.startsWith('registry://') ? parseAgentId(subject) : undefined;
      if (!parsed) {
        throw new WardError('VALIDATION_ERROR', 'subject must be an agent URI or a registry URI.', {
          errors: [{ in: 'query', pointer: '/subject', reason: 'must be an agent URI or a registry URI' }],
        });
      }
      const record = await ward.agents.get(parsed.ulid);
      if (parsed.jurisdiction !== record.jurisdiction) throw new WardError('AGENT_NOT_FOUND', undefined, { subject });
      if (record.status !== 'active' || record.trust_validation.state !== 'validated') {
        throw new WardError('AGENT_NOT_ACTIVE', 'Bundles are issued only for active, trust-validated agents.', {
          agent_id: record.agent_id,
          status: record.status,
          trust_validation_state: record.trust_validation.state,
        });
      }
      return agentTrustBundle(record, context);
    },
  );

  app.get(
    '/v1/trust/anchors',
    {
      schema: {
        tags: ['trust'],
        summary: "This registry's trust anchors: its published signing keys",
        response: { 200: Type.Object({ anchors: Type.Array(TrustAnchorSchema) }), ...errorResponses() },
      },
    },
    async () => ({
      anchors: ward.signer.publishedKeys().map((key) => ({
        key_id: key.kid,
        alg: key.alg as 'ES256' | 'EdDSA' | 'RS256',
        jwks_uri: `${ward.baseUrl()}/.well-known/jwks.json`,
        // The kid is the RFC 7638 SHA-256 thumbprint of the public JWK.
        thumbprint_sha256: key.kid,
        role: ANCHOR_ROLES[ward.config.REGISTRY_TIER],
        not_before: key.not_before,
        not_after: key.not_after,
      })),
    }),
  );
};
