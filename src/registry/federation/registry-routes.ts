import { registryRoutePlugin } from '../http/route-plugin.ts';
import { WardError } from '../../core/errors.ts';
import { normaliseJurisdiction } from '../../core/jurisdictions.ts';
import { refuseIfRevoked } from './revoked-registry.ts';
import { sendOutcome, writeRequest } from '../http/request-context.ts';
import { errorResponses, IdempotencyHeaders } from '../../contract/schemas/common.ts';
import {
  DelegationGrantSchema,
  FederationSubjectQuery,
  ListRegistriesQuery,
  RegisterRegistryBody,
  RegistryIdParams,
  RegistryListSchema,
  RegistryRecordSchema,
  RegistryStatusSchema,
  RevokeRegistryBody,
} from '../../contract/schemas/registry-schemas.ts';

/**
 * Child registries (contract §5): registration under the tier rules and revocation need
 * registry:admin, lists and gets registry:read. The federation endpoints a child and a verifier use
 * (`/v1/federation/fetch`, `/v1/federation/status`) are public: statements and status tokens are
 * signed, and hold nothing secret (docs/federation.md).
 */
const tags = ['federation'];

export const registryRoutes = registryRoutePlugin('ward-registry-routes', async (app) => {
  const { childRegistries } = app.ward;

  app.post(
    '/v1/registries',
    {
      schema: {
        tags,
        operationId: 'registerChildRegistry',
        summary: 'Register a child registry and delegate to it',
        description: 'Registers a sovereign or organisational registry under this one, within the tier rules, and issues its delegation statement (contract §5, docs/federation.md).',
        headers: IdempotencyHeaders,
        body: RegisterRegistryBody,
        response: { 201: RegistryRecordSchema, 200: RegistryRecordSchema, ...errorResponses(401, 403, 409) },
      },
    },
    async (request, reply) => sendOutcome(reply, await childRegistries.registerOnce(writeRequest(request), request.body)),
  );

  app.get(
    '/v1/registries',
    { schema: { tags, operationId: 'listChildRegistries',
        summary: 'List the child registries of this registry',
        description: 'The child registries this registry has delegated to, filtered by jurisdiction, tier and status, in pages.', querystring: ListRegistriesQuery, response: { 200: RegistryListSchema, ...errorResponses(401, 403) } } },
    async (request) => {
      const { jurisdiction, tier, status, cursor, limit } = request.query;
      const normalised = jurisdiction === undefined ? undefined : normaliseJurisdiction(jurisdiction);
      if (jurisdiction !== undefined && !normalised) {
        throw new WardError('VALIDATION_ERROR', 'The request failed validation.', { errors: [{ in: 'query', pointer: '/jurisdiction', reason: 'must be an assigned ISO 3166-1 alpha-2 code' }] });
      }
      return childRegistries.list(
        { ...(normalised ? { jurisdiction: normalised } : {}), ...(tier ? { tier } : {}), ...(status ? { status } : {}) },
        { limit: limit ?? 20, ...(cursor ? { cursor } : {}) },
      );
    },
  );

  app.get(
    '/v1/registries/:id',
    { schema: { tags, operationId: 'getChildRegistry',
        summary: 'Get a child registry by its registry URI (percent-encoded)',
        description: 'One child registry: its trust anchors, keys, status and delegation chain.', params: RegistryIdParams, response: { 200: RegistryRecordSchema, ...errorResponses(401, 403, 404) } } },
    async (request) => childRegistries.get(request.params.id),
  );

  app.post(
    '/v1/registries/:id/revoke',
    {
      schema: {
        tags,
        operationId: 'revokeChildRegistry',
        summary: 'Revoke a child registry: no further statements, and its status turns revoked',
        description: 'Revokes a child registry: no further delegation statements are issued for it, and its signed status turns revoked.',
        headers: IdempotencyHeaders,
        params: RegistryIdParams,
        body: RevokeRegistryBody,
        response: { 200: RegistryRecordSchema, ...errorResponses(401, 403, 404, 409) },
      },
    },
    async (request, reply) => sendOutcome(reply, await childRegistries.revokeOnce(writeRequest(request), request.params.id, request.body.reason)),
  );

  app.get(
    '/v1/federation/fetch',
    {
      schema: {
        tags,
        operationId: 'fetchDelegationGrant',
        summary: 'A fresh delegation statement for a child, with the chain above it (called by the child)',
        description: 'Called by a child registry: a fresh delegation statement about it, with the statements and keys above it up to the root (docs/federation.md).',
        querystring: FederationSubjectQuery,
        response: { 200: DelegationGrantSchema, ...errorResponses(403, 404) },
      },
    },
    async (request, reply) => {
      // A revoked registry delegates nothing further: its children learn it at their next fetch.
      refuseIfRevoked(app.ward);
      const entityConfiguration = request.headers['ward-entity-configuration'];
      reply.header('cache-control', 'no-store');
      return childRegistries.grant(request.query.sub, typeof entityConfiguration === 'string' ? entityConfiguration : undefined);
    },
  );

  app.get(
    '/v1/federation/status',
    { schema: { tags, operationId: 'getChildRegistryStatus',
        summary: "A child registry's status, signed (online checks by verifiers)",
        description: 'A child registry\'s status (active or revoked) in a signed status token, for verifiers that check online, like OCSP.', querystring: FederationSubjectQuery, response: { 200: RegistryStatusSchema, ...errorResponses(404) } } },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return childRegistries.status(request.query.sub);
    },
  );
});
