import { registryRoutePlugin } from '../http/route-plugin.ts';
import { WardError } from '../../core/errors.ts';
import { normaliseJurisdiction } from '../../core/jurisdictions.ts';
import { refuseIfRevoked } from '../federation/revoked-registry.ts';
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
        summary: 'Register a child registry and delegate to it',
        headers: IdempotencyHeaders,
        body: RegisterRegistryBody,
        response: { 201: RegistryRecordSchema, 200: RegistryRecordSchema, ...errorResponses(401, 403, 409) },
      },
    },
    async (request, reply) => sendOutcome(reply, await childRegistries.registerOnce(writeRequest(request), request.body)),
  );

  app.get(
    '/v1/registries',
    { schema: { tags, summary: 'List the child registries of this registry', querystring: ListRegistriesQuery, response: { 200: RegistryListSchema, ...errorResponses(401, 403) } } },
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
    { schema: { tags, summary: 'Get a child registry by its registry URI (percent-encoded)', params: RegistryIdParams, response: { 200: RegistryRecordSchema, ...errorResponses(401, 403, 404) } } },
    async (request) => childRegistries.get(request.params.id),
  );

  app.post(
    '/v1/registries/:id/revoke',
    {
      schema: {
        tags,
        summary: 'Revoke a child registry: no further statements, and its status turns revoked',
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
        summary: 'A fresh delegation statement for a child, with the chain above it (called by the child)',
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
    { schema: { tags, summary: "A child registry's status, signed (online checks by verifiers)", querystring: FederationSubjectQuery, response: { 200: RegistryStatusSchema, ...errorResponses(404) } } },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return childRegistries.status(request.query.sub);
    },
  );
});
