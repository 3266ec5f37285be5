import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type } from 'typebox';
import {
  ENTITY_CONFIGURATION_PATH,
  ENTITY_STATEMENT_MEDIA_TYPE,
  RESOLVE_RESPONSE_MEDIA_TYPE,
  oidfEndpointPath,
} from '../../../contract/openid-federation.ts';
import { TRUST_MARK_MEDIA_TYPE, TRUST_MARK_STATUS_MEDIA_TYPE } from '../../../contract/oidf-trust-marks.ts';
import { WardError } from '../../../core/errors.ts';
import { createGuardedFetch } from '../../../core/net/guarded-fetch.ts';
import { registryRoutePlugin } from '../../http/route-plugin.ts';
import { signEntityConfiguration } from './entity-configuration.ts';
import type { OidfDeps } from './oidf-deps.ts';
import { OidfError } from '../../../client/oidf/oidf-error.ts';
import {
  listQuery,
  resolveQuery,
  subjectQuery,
  trustMarkListQuery,
  trustMarkQuery,
  trustMarkStatusForm,
  type RawQuery,
} from './oidf-query.ts';
import { issueTrustMark, listTrustMarkedEntities, signTrustMarkStatus } from './trust-marks.ts';
import { listSubordinates, signSubordinateStatement } from './subordinate-statements.ts';
import { registerErrorHandling } from '../../http/error-handler.ts';
import { sendOidfRefusal } from './oidf-refusals.ts';
import { createResolveBudgets } from './resolve-budget.ts';
import { signResolveResponse } from './trust-chain-resolver.ts';
import { createSubordinateRollover } from './subordinate-rollover.ts';

/** Resolutions in flight per instance: each fetches up to a dozen statements from elsewhere. */
const MAX_CONCURRENT_RESOLUTIONS = 8;

const OidfErrorBody = Type.Object(
  { error: Type.String(), error_description: Type.String() },
  { title: 'OidfError' },
);
/** OIDF refusals in OIDF's format; the registry's own (limits, PHI guard) keep Ward's envelope. */
// Every refusal of these endpoints is OIDF's (../oidf/oidf-refusals.ts), those before the route too.
const refusals = Object.fromEntries([400, 401, 404, 413, 415, 422, 429, 500, 503].map((status) => [status, OidfErrorBody]));
const jwtAnswer = (mediaType: string, description: string) => ({
  description,
  content: { [mediaType]: { schema: Type.String({ description: 'A compact JWS' }) } },
});
/** Every parameter arrives as it was sent (repeated ones as arrays) and is read by ../oidf/oidf-query.ts, so a refusal is OIDF's. */
const AnyQuery = (properties: Record<string, string>) =>
  Type.Object(
    Object.fromEntries(
      Object.entries(properties).map(([name, description]) => [
        name,
        Type.Optional(Type.Unknown({ description })),
      ]),
    ),
    { additionalProperties: true },
  );

/** Sends a compact JWS with its OIDF media type (exactly: OIDF clients compare it as a string). */
function sendJwt(reply: FastifyReply, mediaType: string, jwt: string) {
  return reply.header('cache-control', 'no-store').type(mediaType).send(jwt);
}

/** Answers an OidfError in OIDF's format; anything else goes on to the registry's error handler. */
async function answering(reply: FastifyReply, work: () => Promise<unknown>): Promise<void> {
  try {
    await work();
  } catch (error) {
    if (!(error instanceof OidfError)) throw error;
    if (error.retryAfterS !== undefined) reply.header('retry-after', String(error.retryAfterS));
    await reply
      .code(error.status)
      .header('cache-control', 'no-store')
      .type('application/json')
      .send(JSON.stringify(error.body()));
  }
}

/**
 * OpenID Federation 1.0 (docs/federation.md, "OpenID Federation"): the entity configuration at
 * `/.well-known/openid-federation`, and the fetch, list and resolve endpoints it names. All public:
 * everything they answer is signed, and holds nothing secret. Ward's own federation endpoints
 * (`/v1/federation/*`) stand beside them unchanged.
 */
export const openIdFederationRoutes = registryRoutePlugin('ward-openid-federation-routes', async (app) => {
  const deps = oidfDeps(app.ward, (message, error) => app.log.warn({ err: error }, message));
  registerErrorHandling(app as unknown as FastifyInstance, sendOidfRefusal, { notFound: false });
  const budgets = createResolveBudgets({ perMinute: app.ward.config.REGISTRY_OIDF_RESOLVE_FETCHES_PER_MINUTE, clock: app.ward.clock });
  readForms(app as unknown as FastifyInstance);
  const tags = ['openid-federation'];
  let resolving = 0;
  /** The resolve endpoint's work, refused as `temporarily_unavailable` while too many run (a resolve fans out). */
  async function boundedResolve(query: RawQuery, caller: string): Promise<string> {
    if (resolving >= MAX_CONCURRENT_RESOLUTIONS)
      throw new OidfError('temporarily_unavailable', 'Too many resolutions are running; retry shortly.');
    resolving += 1;
    try {
      return await signResolveResponse(deps, resolveQuery(query), budgets.for(caller));
    } finally {
      resolving -= 1;
    }
  }

  app.get(
    ENTITY_CONFIGURATION_PATH,
    {
      schema: {
        tags,
        operationId: 'getEntityConfiguration',
        summary: "This registry's entity configuration (OIDF §9), self-signed",
        description: 'The entity configuration of this registry as an OpenID Federation entity: its keys, metadata and authority hints, in a self-signed entity statement.',
        response: { 200: jwtAnswer(ENTITY_STATEMENT_MEDIA_TYPE, 'The entity configuration'), ...refusals },
      },
    },
    async (_request, reply) => {
      await sendJwt(reply as FastifyReply, ENTITY_STATEMENT_MEDIA_TYPE, await signEntityConfiguration(deps));
    },
  );

  app.get(
    oidfEndpointPath('federation_fetch_endpoint'),
    {
      schema: {
        tags,
        operationId: 'fetchSubordinateStatement',
        summary: 'A subordinate statement about a child registry, by its entity identifier (OIDF §8.1)',
        description: 'The entity statement this registry issues about one of its active child registries, named by its entity identifier.',
        querystring: AnyQuery({ sub: 'The entity identifier (api_base_url) of the child registry' }),
        response: { 200: jwtAnswer(ENTITY_STATEMENT_MEDIA_TYPE, 'The subordinate statement'), ...refusals },
      },
    },
    async (request, reply) =>
      answering(reply as FastifyReply, async () =>
        sendJwt(
          reply as FastifyReply,
          ENTITY_STATEMENT_MEDIA_TYPE,
          await signSubordinateStatement(deps, subjectQuery(request.query as RawQuery)),
        ),
      ),
  );

  app.get(
    oidfEndpointPath('federation_list_endpoint'),
    {
      schema: {
        tags,
        operationId: 'listSubordinates',
        summary: 'The entity identifiers of the active child registries (OIDF §8.2)',
        description: 'The entity identifiers of the active child registries, optionally of one entity type or only intermediates.',
        querystring: AnyQuery({
          entity_type: 'Keep entities of this type (repeatable)',
          intermediate: 'true: sovereign children only; false: organisational ones',
        }),
        response: { 200: Type.Array(Type.String()), ...refusals },
      },
    },
    async (request, reply) =>
      answering(reply as FastifyReply, async () => {
        const list = await listSubordinates(deps, listQuery(request.query as RawQuery));
        await reply.header('cache-control', 'no-store').send(list);
      }),
  );

  app.get(
    oidfEndpointPath('federation_resolve_endpoint'),
    {
      schema: {
        tags,
        operationId: 'resolveEntity',
        description: 'Resolves an entity under one of the named trust anchors: its trust chain and its metadata with the policies applied, in a signed resolve response.',
        summary: "An entity's resolved metadata and trust chain under a trust anchor, signed (OIDF §8.3)",
        querystring: AnyQuery({
          sub: 'The entity to resolve',
          trust_anchor: 'The trust anchor to resolve under (repeatable)',
          entity_type: 'Only these entity types (repeatable)',
        }),
        response: { 200: jwtAnswer(RESOLVE_RESPONSE_MEDIA_TYPE, 'The resolve response'), ...refusals },
      },
    },
    async (request, reply) =>
      answering(reply as FastifyReply, async () =>
        sendJwt(
          reply as FastifyReply,
          RESOLVE_RESPONSE_MEDIA_TYPE,
          await boundedResolve(request.query as RawQuery, request.ip),
        ),
      ),
  );

  registerTrustMarkRoutes(app as unknown as FastifyInstance, deps, tags);
});

/**
 * The trust mark endpoint (OIDF §8.6) and the trust mark status endpoint (OIDF §8.4), both public: a
 * mark is issued only while what it asserts holds, and the status is judged against the record now.
 */
function registerTrustMarkRoutes(app: FastifyInstance, deps: OidfDeps, tags: string[]): void {
  app.get(
    oidfEndpointPath('federation_trust_mark_endpoint'),
    {
      schema: {
        operationId: 'issueTrustMark',
        tags,
        summary: 'A trust mark this registry issues about one of its agents or child registries (OIDF §8.6)',
        description:
          'Signs a fresh trust mark (`typ: trust-mark+jwt`) of `trust_mark_type` about `sub` while what it asserts holds (docs/federation.md, "Trust marks"): `sub` is an agent entity identifier (`{registry}/v1/agents/{agent URI}`) or a child registry\'s entity identifier. A type Ward does not issue, an unknown subject, or a property that does not hold now is `not_found`. Errors in OIDF\'s format.',
        querystring: AnyQuery({
          trust_mark_type: 'The trust mark type (a urn:ward:trust-mark: identifier)',
          sub: 'The entity identifier of the subject',
        }),
        response: { 200: jwtAnswer(TRUST_MARK_MEDIA_TYPE, 'The trust mark'), ...refusals },
      },
    },
    async (request, reply) =>
      answering(reply as FastifyReply, async () => {
        const { type, sub } = trustMarkQuery(request.query as RawQuery);
        await sendJwt(reply as FastifyReply, TRUST_MARK_MEDIA_TYPE, await issueTrustMark(deps, type, sub));
      }),
  );

  app.get(
    oidfEndpointPath('federation_trust_mark_list_endpoint'),
    {
      schema: {
        operationId: 'listTrustMarkedEntities',
        tags,
        summary: 'The entities this registry gives a trust mark of a type now (OIDF §8.5)',
        description:
          "The entity identifiers this registry would issue a mark of `trust_mark_type` about now, as a JSON array: for `urn:ward:trust-mark:delegated-registry` its active child registries (or just `sub`, when given and one of them); for the agent types only `sub`, which is then required (a registry does not list its agents to anyone who asks). A type Ward does not issue is `not_found`. Errors in OIDF's format.",
        querystring: AnyQuery({
          trust_mark_type: 'The trust mark type (a urn:ward:trust-mark: identifier)',
          sub: 'Only this entity identifier: answers it if it has the mark, else an empty array',
        }),
        response: { 200: Type.Array(Type.String({ description: 'An entity identifier' })), ...refusals },
      },
    },
    async (request, reply) =>
      answering(reply as FastifyReply, async () => {
        const { type, sub } = trustMarkListQuery(request.query as RawQuery);
        await reply.header('cache-control', 'no-store').send(await listTrustMarkedEntities(deps, type, sub));
      }),
  );

  app.post(
    oidfEndpointPath('federation_trust_mark_status_endpoint'),
    {
      schema: {
        operationId: 'trustMarkStatus',
        tags,
        summary: 'Whether a trust mark this registry issued is active now (OIDF §8.4)',
        description:
          "A form (`application/x-www-form-urlencoded`) with `trust_mark`; answers a signed `trust-mark-status-response+jwt` `{iss, iat, trust_mark, status}` with status `active`, `expired`, `revoked` (the subject is suspended, revoked or gone, or what the mark asserts no longer holds) or `invalid` (not a mark this registry signed). Read-only: no idempotency key. Errors in OIDF's format.",
        consumes: ['application/x-www-form-urlencoded'],
        body: Type.Object(
          { trust_mark: Type.Unknown({ description: 'The trust mark (a compact JWS)' }) },
          { additionalProperties: true },
        ),
        response: { 200: jwtAnswer(TRUST_MARK_STATUS_MEDIA_TYPE, 'The signed status'), ...refusals },
      },
      // Validation is the form reader's (OIDF's error format), not the schema's.
      validatorCompiler: () => () => true,
      // The mark is a signed token, verified and never stored or logged: its iat/exp are not NHS numbers.
      config: { phiSignedBody: ['trust_mark'] },
    },
    async (request, reply) =>
      answering(reply as FastifyReply, async () =>
        sendJwt(
          reply as FastifyReply,
          TRUST_MARK_STATUS_MEDIA_TYPE,
          await signTrustMarkStatus(deps, trustMarkStatusForm(request.headers['content-type'], request.body)),
        ),
      ),
  );
}

/** What the OIDF endpoints work with, from the registry's services. */
export function oidfDeps(ward: FastifyInstance['ward'], log: (message: string, error?: unknown) => void = () => {}): OidfDeps {
  const { config } = ward;
  const fetch = createGuardedFetch({
    allowPrivate: config.REGISTRY_ENV !== 'production' || config.REGISTRY_ALLOW_PRIVATE_ENDPOINTS,
  });
  return {
    config,
    activeChildren: () => ward.childRegistries.activeChildren(),
    activeChildAt: (entityId) => ward.childRegistries.activeChildAt(entityId),
    clock: ward.clock,
    signer: ward.signer,
    registryId: ward.registryId,
    baseUrl: () => ward.baseUrl(),
    revoked: () => ward.parentLink.revoked(),
    agent: (agentId) =>
      ward.agents.getByRef(agentId).catch((error: unknown) => {
        if (error instanceof WardError && error.status < 500) return undefined;
        throw error;
      }),
    heldTrustMarks: () => ward.heldTrustMarks(),
    superiorView: ward.superiorView,
    fetch,
    // One per plugin, so per instance: a child's configuration is read at most once a second here.
    subordinateRollover: createSubordinateRollover({ config, clock: ward.clock, fetch, storage: ward.storage, log }),
  };
}

/** OIDF §8.4.1: the status request is a form (repeated names as arrays). Only this plugin's routes read forms. */
function readForms(app: FastifyInstance): void {
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 64 * 1024 },
    (_request, body, done) => {
      const form: Record<string, string | string[]> = {};
      for (const [name, value] of new URLSearchParams(body as string)) {
        const before = form[name];
        form[name] = before === undefined ? value : [before, value].flat();
      }
      done(null, form);
    },
  );
}
