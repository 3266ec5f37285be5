import { Type } from 'typebox';
import { WardError } from '../../core/errors.ts';
import { refuseIfRevoked } from './revoked-registry.ts';
import { parseAgentId } from '../../core/ids.ts';
import { TrustBundleQuery, TrustBundleSchema } from '../../contract/schemas/discovery-schemas.ts';
import { errorResponses } from '../../contract/schemas/common.ts';
import { sendOutcome, writeRequest } from '../http/request-context.ts';
import { IdempotencyHeaders } from '../../contract/schemas/common.ts';
import { RotateKeyBody, RotatedKeySchema, TrustAnchorSchema } from '../../contract/schemas/registry-schemas.ts';
import { agentTrustBundle, childRegistryTrustBundle, registryTrustBundle } from '../../contract/trust-bundle.ts';
import { registryRoutePlugin } from '../http/route-plugin.ts';

const REGISTRY_URI = /^registry:\/\/[a-z]{2}\/registries\/[a-z0-9][a-z0-9-]{0,62}$/;
const ANCHOR_ROLES = { root: 'root', sovereign: 'sovereign_registry', organisational: 'organisation' } as const;

/** Trust anchors and bundles (contract §5). */
export const trustRoutes = registryRoutePlugin('ward-trust-routes', async (app) => {
  const ward = app.ward;

  app.get(
    '/v1/trust/bundle',
    {
      schema: {
        tags: ['trust'],
        operationId: 'getTrustBundle',
        summary: 'The trust bundle of an agent or of this registry',
        description: 'The certificates, keys, attestations and delegation chain a caller needs to trust an active agent, a child registry or this registry, signed by this registry (contract §5).',
        querystring: TrustBundleQuery,
        response: { 200: TrustBundleSchema, ...errorResponses(403, 404, 409) },
      },
    },
    async (request) => {
      refuseIfRevoked(ward);
      const { subject } = request.query;
      const context = { signer: ward.signer, registryId: ward.registryId, ...ward.trustChain(), trustChain: await ward.oidfTrustChain(), now: ward.clock.now() };
      if (subject === ward.registryId) return registryTrustBundle(context);
      if (REGISTRY_URI.test(subject)) {
        // A child registry: this registry vouches for its keys, as its delegation statements do.
        const child = await ward.childRegistries.get(subject).catch(() => {
          throw new WardError('REGISTRY_NOT_FOUND', undefined, { subject });
        });
        if (child.status === 'revoked') throw new WardError('REGISTRY_REVOKED', undefined, { registry_id: child.registry_id, reason: child.revocation_reason });
        return childRegistryTrustBundle(child, context);
      }
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
      return agentTrustBundle(record, { ...context, trustMarks: await ward.agentTrustMarks(record) });
    },
  );

  app.get(
    '/v1/trust/anchors',
    {
      schema: {
        tags: ['trust'],
        operationId: 'listTrustAnchors',
        summary: "This registry's trust anchors: its published signing keys",
        description: 'The signing keys this registry publishes, with their validity: what verifiers of its signatures trust (contract §5).',
        response: { 200: Type.Object({ anchors: Type.Array(TrustAnchorSchema) }, { title: 'TrustAnchorList' }), ...errorResponses() },
      },
    },
    async () => {
      await ward.signer.refreshIfStale();
      return { anchors: ward.signer.publishedKeys().map((key) => ({
        key_id: key.kid,
        alg: key.alg as 'ES256' | 'EdDSA' | 'RS256',
        jwks_uri: `${ward.baseUrl()}/.well-known/jwks.json`,
        // The kid is the RFC 7638 SHA-256 thumbprint of the public JWK.
        thumbprint_sha256: key.kid,
        role: ANCHOR_ROLES[ward.config.REGISTRY_TIER],
        not_before: key.not_before,
        not_after: key.not_after,
      })) };
    },
  );

  app.post(
    '/v1/trust/keys/rotate',
    {
      schema: {
        tags: ['trust'],
        operationId: 'rotateSigningKey',
        summary: "Rotate the registry's signing key; the old public key stays published until its not_after",
        description: 'Makes a new signing key current. The previous public key stays in the JWKS until its not_after, so signatures made with it still verify.',
        headers: IdempotencyHeaders,
        body: RotateKeyBody,
        response: { 201: RotatedKeySchema, 200: RotatedKeySchema, ...errorResponses(401, 403, 409) },
      },
    },
    async (request, reply) => {
      const { alg, retire_after_seconds: retireAfterSeconds } = request.body ?? {};
      const outcome = await ward.keyRenewal.rotateOnce(writeRequest(request), { alg, retireAfterSeconds });
      if (!outcome.replayed) {
        // The parent's statements must name the new key before bundles signed with it can verify.
        ward.parentLink.refresh().catch((error: unknown) => request.log.warn({ err: error }, 'refreshing the delegation after rotation failed'));
        // So must its superior's OIDF statement: building the chain has the superior read the configuration offering the key.
        ward.oidfTrustChain().catch((error: unknown) => request.log.warn({ err: error }, 'rebuilding the OpenID Federation chain after rotation failed'));
      }
      return sendOutcome(reply, outcome);
    },
  );
});
