/**
 * The FHIR R4 directory at `/fhir` (docs/fhir.md): read and search of Device, Endpoint and
 * Organization, and the CapabilityStatement. Read-only, `registry:read` like the rest of the
 * registry's reads; JSON only. Every error in this scope is an OperationOutcome (the registry's error
 * decisions, rendered the FHIR way), an unknown path under `/fhir` included: register it with the
 * prefix `/fhir`, which gives the scope its own not-found handler.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { FHIR_JSON } from '../../contract/fhir-vocabulary.ts';
import { WardError } from '../../core/errors.ts';
import { WARD_VERSION } from '../../core/version.ts';
import { capabilityStatement } from './capability-statement.ts';
import { deviceOf, endpointsOf, readOrganizationId, type FhirResource } from './fhir-resources.ts';
import { includedOrganizations, revincludedEndpoints, runProvenance, search, type SearchDeps } from './fhir-search.ts';
import { readRunProvenanceId } from './run-provenance.ts';
import { deviceHistory, historyEntry, parseHistoryRequest, readDeviceVersion } from './device-history.ts';
import { sendOperationOutcome } from './operation-outcome.ts';
import { provenanceOf, readProvenanceId } from './provenance.ts';
import { findLedgerLeaf } from '../storage/stores/ledger-store.ts';
import { parseAgentId } from '../../core/ids.ts';
import { emptySearch, parseSearch, REVINCLUDE_LIMIT, SEARCH_PARAMETERS, type ResourceType } from './search-parameters.ts';
import { registerErrorHandling } from '../http/error-handler.ts';
import { createResponseCache } from '../discovery/index.ts';
import { registryRoutePlugin } from '../http/route-plugin.ts';

const FHIR_CONTENT_TYPE = `${FHIR_JSON}; charset=utf-8`;
const TYPES = Object.keys(SEARCH_PARAMETERS) as ResourceType[];
const AnyQuery = Type.Object({}, { additionalProperties: true });
const OperationOutcome = Type.Object(
  { resourceType: Type.Literal('OperationOutcome'), issue: Type.Array(Type.Object({}, { additionalProperties: true })) },
  { additionalProperties: true, title: 'OperationOutcome', description: "FHIR R4 OperationOutcome; the Ward error code in issue[0].details.coding (docs/fhir.md)" },
);
/** A FHIR R4 resource as sent: no properties named, so it is serialised as built (key order kept). */
const FhirResource = Type.Object({}, { additionalProperties: true, title: 'FhirResource', description: 'A FHIR R4 resource in FHIR JSON (resourceType names which)' });
const fhirAnswer = (description: string) => ({ description, content: { [FHIR_JSON]: { schema: FhirResource } } });
/** Every error the FHIR directory answers, as an OperationOutcome in FHIR JSON (for the OpenAPI document). */
const outcomes = (...statuses: number[]) =>
  Object.fromEntries([...new Set([400, 401, 406, 422, 429, 500, 503, ...statuses])].map((status) => [status, { description: 'An OperationOutcome', content: { [FHIR_JSON]: { schema: OperationOutcome } } }]));
const ReadParams = Type.Object({ id: Type.String({ maxLength: 200 }) });
const VersionParams = Type.Object({ id: Type.String({ maxLength: 200 }), vid: Type.String({ maxLength: 20 }) });
const JSON_FORMATS = new Set(['json', 'application/json', 'application/fhir+json', FHIR_JSON]);

/**
 * JSON or nothing: `_format` (FHIR R4 §3.1.0.1.8) must name JSON, and an `Accept` header must allow
 * it. XML is 406 with an OperationOutcome, in JSON, since that is all this server writes.
 */
function requireJson(request: FastifyRequest): void {
  const format = (request.query as Record<string, unknown>)._format;
  if (format !== undefined && !JSON_FORMATS.has(String(format).split(';')[0]?.trim() ?? '')) {
    throw new WardError('NOT_ACCEPTABLE', `This server answers FHIR JSON only; _format=${String(format).slice(0, 40)} is not supported.`, { format: 'xml' });
  }
  const accept = request.headers.accept;
  if (accept && !/(^|,)\s*(\*\/\*|application\/\*|application\/(fhir\+)?json)\s*(;|,|$)/i.test(accept)) {
    throw new WardError('NOT_ACCEPTABLE', 'This server answers FHIR JSON only (application/fhir+json); the Accept header allows none.', { format: 'xml' });
  }
}

/** `Prefer: handling=strict` refuses unknown search parameters; lenient (the default) ignores them. */
const isStrict = (request: FastifyRequest) => /(^|[,;\s])handling\s*=\s*strict\b/i.test(String(request.headers.prefer ?? ''));

function sendResource(reply: FastifyReply, resource: FhirResource): FastifyReply {
  const meta = resource.meta as { versionId?: string; lastUpdated?: string } | undefined;
  if (meta?.versionId) reply.header('etag', `W/"${meta.versionId}"`);
  if (meta?.lastUpdated) reply.header('last-modified', new Date(meta.lastUpdated).toUTCString());
  return reply.type(FHIR_CONTENT_TYPE).send(resource as never);
}

/**
 * A searchset's entries: the matches, what `_include` and `_revinclude` added, and a warning outcome
 * for each Organization whose endpoints were cut at REVINCLUDE_LIMIT.
 */
function searchEntries(base: string, type: ResourceType, matches: readonly FhirResource[], included: readonly FhirResource[], cut: readonly string[], warnings: readonly string[] = []) {
  if (matches.length === 0 && warnings.length === 0) return [];
  const issues = [
    ...warnings.map((diagnostics) => ({ severity: 'warning', code: 'not-found', diagnostics })),
    ...(matches.length === 0 ? [] : cut).map((id) => ({
      severity: 'warning',
      code: 'incomplete',
      diagnostics: `Organization/${id} has more than ${REVINCLUDE_LIMIT} endpoints; the first ${REVINCLUDE_LIMIT} are included. Search Endpoint?organization=Organization/${id} for all of them.`,
    })),
  ];
  const outcome = issues.length === 0 ? [] : [{
    resource: {
      resourceType: 'OperationOutcome',
      issue: issues,
    },
    search: { mode: 'outcome' },
  }];
  return [
    ...matches.map((resource) => ({ fullUrl: `${base}/${type}/${resource.id}`, resource, search: { mode: 'match' } })),
    ...included.map((resource) => ({ fullUrl: `${base}/${resource.resourceType}/${resource.id}`, resource, search: { mode: 'include' } })),
    ...outcome,
  ];
}

const notFound = (type: ResourceType, id: string) => new WardError('RESOURCE_NOT_FOUND', `There is no ${type}/${id.slice(0, 80)} here.`, { resource_type: type, id: id.slice(0, 80) });

/**
 * `Device/{id}/_history` and vread (docs/fhir.md, "History"), registered inside the FHIR scope so its
 * JSON check and OperationOutcome errors apply.
 */
const deviceHistoryRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/Device/:id/_history',
    {
      schema: {
        operationId: 'readFhirDeviceHistory',
        tags: ['fhir'],
        summary: "An agent's record versions as a FHIR history Bundle",
        description: 'Every kept version of the Device, newest first (docs/fhir.md, "History"); `_count` (1–100), `_since` (an instant) and the `next` link page it.',
        params: ReadParams,
        querystring: AnyQuery,
        response: { 200: fhirAnswer('A history Bundle'), ...outcomes(401, 403, 404) },
      },
    },
    async (request, reply) => {
      const parsed = parseHistoryRequest(request.query as Record<string, unknown>, isStrict(request));
      const page = await deviceHistory(app.ward.storage, request.params.id, parsed);
      if (!page) throw notFound('Device', request.params.id);
      const base = `${app.ward.baseUrl()}/fhir`;
      const link = (extra: Array<[string, string]>) => `${base}/Device/${request.params.id}/_history?${new URLSearchParams([...parsed.used, ...extra]).toString()}`;
      const bundle = {
        resourceType: 'Bundle',
        type: 'history',
        ...(page.total === undefined ? {} : { total: page.total }),
        link: [{ relation: 'self', url: link([]) }, ...(page.next ? [{ relation: 'next', url: link([['_page_token', page.next]]) }] : [])],
        ...(page.resources.length > 0 ? { entry: page.resources.map((device) => historyEntry(base, device)) } : {}),
      };
      return reply.type(FHIR_CONTENT_TYPE).send(bundle as never);
    },
  );

  app.get(
    '/Device/:id/_history/:vid',
    {
      schema: {
        operationId: 'readFhirDeviceVersion',
        tags: ['fhir'],
        summary: 'One version of a Device (vread)',
        description: 'The Device as it was at record version `vid`, with that version as its ETag and its time as Last-Modified (docs/fhir.md, "History").',
        params: VersionParams,
        querystring: AnyQuery,
        response: { 200: fhirAnswer('The Device at that version'), ...outcomes(401, 403, 404) },
      },
    },
    async (request, reply) => {
      const device = await readDeviceVersion(app.ward.storage, request.params.id, request.params.vid);
      if (!device) throw notFound('Device', `${request.params.id}/_history/${request.params.vid}`);
      return sendResource(reply, device);
    },
  );
};

export const fhirRoutes = registryRoutePlugin('ward-fhir-routes', async (app) => {
  const { ward } = app;
  const deps: SearchDeps = {
    agents: ward.agents,
    discovery: ward.discovery,
    storage: ward.storage,
    registryId: ward.registryId,
    entriesUrl: () => `${ward.baseUrl()}/v1/transparency/entries`,
    treeHead: () => ward.ledger.signedTreeHead(),
  };
  const answers = createResponseCache<Buffer>({ maxEntries: ward.config.REGISTRY_DISCOVERY_CACHE_ENTRIES, maxAgeMs: 30_000, now: () => ward.clock.now().getTime() });
  registerErrorHandling(app, sendOperationOutcome);
  app.addHook('onRequest', async (request) => requireJson(request));

  const tags = ['fhir'];
  const metadataSchema = {
    tags,
    operationId: 'getFhirCapabilityStatement',
    summary: 'The FHIR CapabilityStatement',
    description: 'What this FHIR R4 directory supports: the resources, their search parameters and interactions (public).',
    querystring: AnyQuery,
    response: { 200: fhirAnswer('The CapabilityStatement'), ...outcomes() },
  };
  app.get('/metadata', { schema: metadataSchema }, async (_request, reply) =>
    reply.type(FHIR_CONTENT_TYPE).send(capabilityStatement({ baseUrl: ward.baseUrl(), software: { name: 'Ward', version: WARD_VERSION }, date: ward.clock.now().toISOString() }) as never),
  );

  /** The resource of `type` with `id`, or a 404 OperationOutcome. */
  async function read(type: ResourceType, id: string): Promise<FhirResource> {
    if (type === 'Provenance' && readRunProvenanceId(id) !== undefined) {
      const context = { registryId: ward.registryId, entriesUrl: deps.entriesUrl(), treeHead: await deps.treeHead() };
      const provenance = await runProvenance(ward.storage, readRunProvenanceId(id) as string, context);
      if (!provenance) throw notFound(type, id);
      return provenance;
    }
    if (type === 'Provenance') {
      const leafIndex = readProvenanceId(id);
      const leaf = leafIndex === undefined ? undefined : await findLedgerLeaf(ward.storage.db, leafIndex);
      // Only an agent's changes are Provenance here (a run's session id is a ULID too, but no agent URI).
      const agent = leaf?.subject?.startsWith('registry://') ? parseAgentId(leaf.subject) : undefined;
      const treeHead = await deps.treeHead();
      if (!leaf || !agent || leaf.leafIndex >= treeHead.tree_size) throw notFound(type, id);
      return provenanceOf(leaf, { target: `Device/${agent.ulid}`, registryId: ward.registryId, entriesUrl: deps.entriesUrl(), treeHead });
    }
    if (type === 'Organization') {
      const wanted = readOrganizationId(id);
      const { resources } = wanted ? await search(deps, 'Organization', { ...emptySearch(), tokens: new Map([['_id', [[{ code: id }]]]]) }) : { resources: [] };
      if (resources[0]) return resources[0];
      throw notFound(type, id);
    }
    const ulid = (type === 'Device' ? id : id.split('-')[0]) ?? '';
    const record = /^[0-9A-HJKMNP-TV-Z]{26}$/.test(ulid) ? await ward.agents.get(ulid).catch(() => undefined) : undefined;
    const resource = record && (type === 'Device' ? deviceOf(record) : endpointsOf(record).find((endpoint) => endpoint.id === id));
    if (!resource) throw notFound(type, id);
    return resource;
  }

  for (const type of TYPES) {
    const searchSchema = {
      tags,
      operationId: `searchFhir${type}`,
      summary: `Search ${type} resources`,
      description: `A searchset Bundle of ${type} resources matching the FHIR search parameters the CapabilityStatement lists, in pages (docs/fhir.md).`,
      querystring: AnyQuery,
      response: { 200: fhirAnswer('A searchset Bundle'), ...outcomes(401, 403) },
    };
    app.get(`/${type}`, { schema: searchSchema }, async (request, reply) => {
      // Discovery's answer cache, as bytes: valid while nothing is committed (and for 30 s at most).
      const key = `${isStrict(request) ? 'strict' : 'lenient'} ${request.url}`;
      const generation = ward.eventHub.committedSeq();
      const cached = answers.get(key, generation);
      if (cached) return reply.type(FHIR_CONTENT_TYPE).send(cached as never);
      const query = request.query as Record<string, unknown>;
      const parsed = parseSearch(type, query, isStrict(request));
      const answer = await search(deps, type, parsed);
      const included = parsed.includeOrganizations ? await includedOrganizations(deps, answer.resources) : [];
      const revincluded = parsed.revincludeEndpoints && type === 'Organization' ? await revincludedEndpoints(deps, answer.resources) : { endpoints: [], cut: [] };
      const base = `${ward.baseUrl()}/fhir/${type}`;
      const link = (extra: Array<[string, string]>) => `${base}?${new URLSearchParams([...parsed.used, ...extra]).toString()}`;
      // FHIR resources are sent as built; the schemas above document the OperationOutcomes only.
      const entry = searchEntries(`${ward.baseUrl()}/fhir`, type, answer.resources, [...included, ...revincluded.endpoints], revincluded.cut, answer.warnings);
      const bundle = {
        resourceType: 'Bundle',
        type: 'searchset',
        ...(answer.total === undefined ? {} : { total: answer.total }),
        link: [
          { relation: 'self', url: link(parsed.pageToken ? [['_page_token', parsed.pageToken]] : []) },
          ...(answer.next ? [{ relation: 'next', url: link([['_page_token', answer.next]]) }] : []),
        ],
        ...(entry.length > 0 ? { entry } : {}),
      };
      const bytes = Buffer.from(JSON.stringify(bundle));
      answers.set(key, generation, bytes);
      return reply.type(FHIR_CONTENT_TYPE).send(bytes as never);
    });
    const readSchema = {
      tags,
      operationId: `readFhir${type}`,
      summary: `Read a ${type}`,
      description: `One ${type} resource by its id, with its version as a weak ETag.`,
      params: ReadParams,
      querystring: AnyQuery,
      response: { 200: fhirAnswer(`The ${type}`), ...outcomes(401, 403, 404) },
    };
    app.get(`/${type}/:id`, { schema: readSchema }, async (request, reply) =>
      sendResource(reply, await read(type, request.params.id)),
    );
  }

  await app.register(deviceHistoryRoutes);
});

