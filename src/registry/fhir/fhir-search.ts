/**
 * Searches of the FHIR directory: a parsed search (search-parameters.ts) as the store's own filters
 * where it has them (agent id, status, owner, name), the rest checked on each resource, paged by
 * resource-pages.ts. Answers are `searchset` Bundles with `self` and `next` links.
 */
import type { AgentRecord } from '../../contract/agent-record.ts';
import { protocolsForConnectionType, URI_IDENTIFIER_SYSTEM, WARD_CODE_SYSTEMS } from '../../contract/fhir-vocabulary.ts';
import { WardError } from '../../core/errors.ts';
import { parseAgentId } from '../../core/ids.ts';
import type { AgentService } from '../agents/index.ts';
import type { DiscoveryService } from '../discovery/index.ts';
import type { Storage } from '../storage/database.ts';
import { findAgents, listAgentPage, type AgentFilter } from '../agents/index.ts';
import { listAgentIdsWithProtocols } from '../agents/index.ts';
import { toAgentRecords } from '../agents/index.ts';
import { countOwners, listOwnerPage } from '../agents/index.ts';
import { listLedgerLeavesOf } from '../storage/stores/ledger-store.ts';
import type { SignedTreeHead } from '../ledger/index.ts';
import { provenanceOf, type ProvenanceContext } from './provenance.ts';
import { RUN_LEAVES_LISTED, runProvenanceOf } from './run-provenance.ts';
import { listRunIdsOpening } from '../computer-use/index.ts';
import { deviceId, deviceOf, endpointsOf, hasOrganizationDigest, organizationOf, readOrganizationId, type FhirResource } from './fhir-resources.ts';
import { collectPage, countAll, type ItemSource } from './resource-pages.ts';
import { countEndpoints, organizationWarnings } from './search-notes.ts';
import { REVINCLUDE_LIMIT, single, type ResourceType, type SearchRequest, type Token } from './search-parameters.ts';

export type SearchDeps = {
  agents: AgentService;
  discovery: DiscoveryService;
  storage: Storage;
  registryId: string;
  /** Where the registry's transparency entries are served (the Provenance leaf identifiers' system). */
  entriesUrl: () => string;
  treeHead: () => Promise<SignedTreeHead>;
};

/** How many agents a `_summary=count` may read where the store cannot count (Endpoint filters). */
const COUNT_READ_LIMIT = 100_000;

export type SearchAnswer = {
  resources: FhirResource[];
  next: string | undefined;
  total: number | undefined;
  /** Warnings for an OperationOutcome entry (search-notes.ts): an `organization` that names no Organization here. */
  warnings?: string[];
};

/** A plan: the store's filter (or none: nothing can match), what is checked per resource, and whether the store's count is exact. */
type Plan = {
  filter: AgentFilter | undefined;
  keep: (resource: FhirResource) => boolean;
  exactCount: boolean;
  skill?: string | undefined;
  /** Endpoint searches by connection type: the protocols whose agents are read from the endpoint index (a superset; `keep` is exact). */
  protocols?: string[] | undefined;
};

const matchesToken = (wanted: Token, system: string | undefined, code: string | undefined) =>
  code !== undefined && wanted.code === code && (wanted.system === undefined || wanted.system === (system ?? ''));

/** Every "and" group has a value among its "or" alternatives that `test` accepts. */
function everyGroup<T>(groups: T[][] | undefined, test: (value: T) => boolean): boolean {
  return (groups ?? []).every((alternatives) => alternatives.some(test));
}

/** `Organization/<id>` or `<id>` (or a full URL ending so) as the owner's `org_id` filter; null when it names none. */
function ownerFilter(request: SearchRequest): { orgId?: string } | null {
  const reference = single(request.strings.get('organization') ?? request.tokens.get('organization')?.map((group) => group.map((token) => token.code)), 'organization');
  if (reference === undefined) return {};
  const id = reference.split('/').at(-1) ?? '';
  const read = readOrganizationId(id);
  if (read === undefined || 'digest' in read) return null;
  return { orgId: read.orgId };
}

/** `_id` and `identifier` as the agent's ULID; null when they name none, or name different ones. */
function agentIdFilter(request: SearchRequest, type: ResourceType): { id?: string } | null {
  const ids = new Set<string>();
  const byId = single(request.tokens.get('_id'), '_id');
  if (byId !== undefined) {
    const ulid = type === 'Device' ? parseAgentId(byId.code)?.ulid : parseAgentId(byId.code.split('-')[0] ?? '')?.ulid;
    if (ulid === undefined) return null;
    ids.add(ulid);
  }
  const identifier = single(request.tokens.get('identifier'), 'identifier');
  if (identifier !== undefined) {
    if (identifier.system !== undefined && identifier.system !== URI_IDENTIFIER_SYSTEM) return null;
    const ulid = parseAgentId(identifier.code)?.ulid;
    if (ulid === undefined) return null;
    ids.add(ulid);
  }
  if (ids.size > 1) return null;
  const [id] = ids;
  return id === undefined ? {} : { id };
}

function agentPlan(type: 'Device' | 'Endpoint', request: SearchRequest): Plan {
  const owner = ownerFilter(request);
  const agent = agentIdFilter(request, type);
  if (owner === null || agent === null) return { filter: undefined, keep: () => false, exactCount: true };
  const filter: AgentFilter = { ...owner, ...agent };
  const checks: Array<(resource: FhirResource) => boolean> = [];
  const statuses = request.tokens.get('status');
  const names = request.strings.get(type === 'Device' ? 'device-name' : 'name');
  const updated = request.dates.get('_lastUpdated');
  if (updated) checks.push((resource) => everyGroup(updated, (test) => test(Date.parse((resource.meta as { lastUpdated: string }).lastUpdated))));
  if (type === 'Device') {
    const status = statuses?.length === 1 && statuses[0]?.length === 1 ? statuses[0][0]?.code : undefined;
    if (status === 'active') filter.status = 'active';
    else if (statuses) checks.push((device) => everyGroup(statuses, (token) => matchesToken(token, undefined, device.status as string)));
    // One name the store can match (contains, any case), unless an id is also asked for (the store ORs the two).
    const name = names?.length === 1 && names[0]?.length === 1 && filter.id === undefined ? names[0][0] : undefined;
    if (name !== undefined) filter.nameContains = name;
    else if (names) checks.push((device) => everyGroup(names, (text) => deviceNameOf(device).includes(text.toLowerCase())));
    const types = request.tokens.get('type');
    if (types) checks.push((device) => everyGroup(types, (token) => codingsOf(device.type).some((coding) => matchesToken(token, coding.system, coding.code))));
  } else {
    if (request.tokens.has('_id')) {
      const wanted = request.tokens.get('_id') ?? [];
      checks.push((endpoint) => everyGroup(wanted, (token) => token.code === endpoint.id));
    }
    if (statuses) checks.push((endpoint) => everyGroup(statuses, (token) => matchesToken(token, undefined, endpoint.status as string)));
    if (names) checks.push((endpoint) => everyGroup(names, (text) => String(endpoint.name).toLowerCase().startsWith(text.toLowerCase())));
    const connections = request.tokens.get('connection-type');
    if (connections) {
      checks.push((endpoint) => {
        const coding = endpoint.connectionType as { system: string; code: string };
        return everyGroup(connections, (token) => matchesToken(token, coding.system, coding.code));
      });
    }
  }
  const skill = type === 'Device' ? single(request.tokens.get('skill'), 'skill') : undefined;
  if (skill?.system !== undefined && skill.system !== WARD_CODE_SYSTEMS.skill) return { filter: undefined, keep: () => false, exactCount: true };
  // By the endpoint index where the store has no narrower filter (an owner's or one agent's endpoints are few).
  const byType = type === 'Endpoint' && filter.orgId === undefined && filter.id === undefined ? request.tokens.get('connection-type')?.[0] : undefined;
  const protocols = byType ? [...new Set(byType.flatMap(protocolsForConnectionType))] : undefined;
  return { filter, keep: (resource) => checks.every((check) => check(resource)), exactCount: checks.length === 0 && !skill, skill: skill?.code, protocols };
}

const deviceNameOf = (device: FhirResource) => String((device.deviceName as Array<{ name: string }>)[0]?.name ?? '').toLowerCase();
const codingsOf = (concept: unknown) => ((concept as { coding?: Array<{ system: string; code: string }> } | undefined)?.coding ?? []);

/**
 * Agents a page at a time in id order, by the store's filter: one index range read of the page (the
 * agent list's own query, without its count, which at a million agents would cost more than the page).
 */
function agentSource(deps: SearchDeps, type: 'Device' | 'Endpoint', plan: Plan & { filter: AgentFilter }): ItemSource {
  const expand = (record: AgentRecord) => (type === 'Device' ? [deviceOf(record)] : endpointsOf(record)).filter(plan.keep);
  return {
    async page(cursor, limit) {
      if (cursor !== undefined && !ULID.test(cursor)) positionOf('');
      const rows = await listAgentPage(deps.storage.db, plan.filter, { limit: limit + 1, ...(cursor === undefined ? {} : { afterId: cursor }) });
      const page = rows.slice(0, limit);
      const records = await toAgentRecords(deps.storage.db, page);
      return { items: records.map(expand), next: rows.length > limit ? page.at(-1)?.id : undefined };
    },
  };
}

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/**
 * `Endpoint?connection-type=`: the agents with an endpoint of one of the protocols, read from the
 * endpoint index (migration 015) a page at a time in id order, their endpoints checked as any search's.
 */
function endpointIndexSource(deps: SearchDeps, protocols: string[], plan: Plan): ItemSource {
  return {
    async page(cursor, limit) {
      if (cursor !== undefined && !ULID.test(cursor)) positionOf('');
      const ids = await listAgentIdsWithProtocols(deps.storage.db, protocols, { limit: limit + 1, ...(cursor === undefined ? {} : { afterId: cursor }) });
      const pageIds = ids.slice(0, limit);
      const rows = (await findAgents(deps.storage.db, pageIds)).sort((a, b) => (a.id < b.id ? -1 : 1));
      const records = await toAgentRecords(deps.storage.db, rows);
      return { items: records.map((record) => endpointsOf(record).filter(plan.keep)), next: ids.length > limit ? pageIds.at(-1) : undefined };
    },
  };
}

/** Discovery's ranking can be paged this deep; past it a skill search ends (docs/fhir.md). */
const MAX_RANKED = 1000;

/**
 * `Device?skill=`: the discoverable agents with the skill in discovery's ranking order, the store's
 * other filters checked on each; the cursor is the position in the ranking.
 */
function skillSource(deps: SearchDeps, skill: string, plan: Plan & { filter: AgentFilter }): ItemSource {
  const { filter } = plan;
  const storeFilter = (record: AgentRecord) =>
    (filter.id === undefined || deviceId(record) === filter.id) &&
    (filter.orgId === undefined || record.owner.org_id === filter.orgId) &&
    (filter.status === undefined || record.status === filter.status) &&
    (filter.nameContains === undefined || record.display_name.toLowerCase().includes(filter.nameContains.toLowerCase()));
  return {
    async page(cursor, limit) {
      const offset = cursor === undefined ? 0 : positionOf(cursor);
      const wanted = Math.min(MAX_RANKED, offset + limit);
      const ranked = offset >= MAX_RANKED ? [] : await deps.discovery.discover({ capability: skill, require_features: [], limit: wanted });
      const items = ranked.slice(offset).map((record) => (storeFilter(record) ? [deviceOf(record)].filter(plan.keep) : []));
      return { items, next: ranked.length === wanted && wanted < MAX_RANKED ? String(wanted) : undefined };
    },
  };
}

function organizationPlan(deps: SearchDeps, request: SearchRequest): { filter: { orgId?: string } | undefined; keep: (resource: FhirResource) => boolean; digest?: string } {
  const checks: Array<(resource: FhirResource) => boolean> = [];
  const filter: { orgId?: string } = {};
  let digest: string | undefined;
  const byId = single(request.tokens.get('_id'), '_id');
  if (byId !== undefined) {
    const read = readOrganizationId(byId.code);
    if (read === undefined) return { filter: undefined, keep: () => false };
    if ('orgId' in read) filter.orgId = read.orgId;
    else digest = read.digest;
  }
  const identifier = single(request.tokens.get('identifier'), 'identifier');
  if (identifier !== undefined) {
    if ((identifier.system !== undefined && identifier.system !== deps.registryId) || (filter.orgId !== undefined && filter.orgId !== identifier.code)) {
      return { filter: undefined, keep: () => false };
    }
    filter.orgId = identifier.code;
  }
  const names = request.strings.get('name');
  if (names) checks.push((organization) => everyGroup(names, (text) => String(organization.name).toLowerCase().startsWith(text.toLowerCase())));
  return { filter, keep: (resource) => checks.every((check) => check(resource)), ...(digest ? { digest } : {}) };
}

function organizationSource(deps: SearchDeps, plan: { filter: { orgId?: string }; keep: (resource: FhirResource) => boolean; digest?: string }): ItemSource {
  return {
    async page(cursor, limit) {
      const owners = await listOwnerPage(deps.storage.db, plan.filter, { limit, ...(cursor === undefined ? {} : { afterOrgId: cursor }) });
      const items = await Promise.all(
        owners.map(async (owner) => {
          if (plan.digest !== undefined && !hasOrganizationDigest(owner.org_id, plan.digest)) return [];
          const organization = organizationOf(owner.org_id, await deps.agents.get(owner.newest_agent_id), deps.registryId);
          return plan.keep(organization) ? [organization] : [];
        }),
      );
      return { items, next: owners.length === limit ? owners.at(-1)?.org_id : undefined };
    },
  };
}

/** One page of a search on `type`, and the total where it is known (always for `_summary=count`). */
export async function search(deps: SearchDeps, type: ResourceType, request: SearchRequest): Promise<SearchAnswer> {
  const kind = `fhir-${type}`;
  if (type === 'Provenance') return provenanceSearch(deps, request, kind);
  if (type === 'Organization') {
    const plan = organizationPlan(deps, request);
    if (plan.filter === undefined) return { resources: [], next: undefined, total: 0 };
    const source = organizationSource(deps, { ...plan, filter: plan.filter });
    const exact = plan.digest === undefined && !request.strings.has('name');
    if (request.summaryCount) return { resources: [], next: undefined, total: exact ? await countOwners(deps.storage.db, plan.filter) : await countOrRefuse(source) };
    const page = await collectPage(source, kind, request.count, request.pageToken);
    return { ...page, total: exact ? await countOwners(deps.storage.db, plan.filter) : wholeAnswer(page, request) };
  }
  const plan = agentPlan(type, request);
  const warnings = await organizationWarnings(deps.storage.db, request);
  if (plan.filter === undefined) return { resources: [], next: undefined, total: 0, warnings };
  const { filter } = plan;
  // Devices are agents, counted by the agent list; Endpoints are the agents' endpoints, summed.
  const exactTotal = () => (type === 'Device' ? deps.agents.list(filter, { limit: 1 }).then((list) => list.total_count) : countEndpoints(deps.storage.db, filter));
  const source =
    plan.skill !== undefined && type === 'Device'
      ? skillSource(deps, plan.skill, { ...plan, filter: plan.filter })
      : plan.protocols !== undefined
        ? endpointIndexSource(deps, plan.protocols, plan)
        : agentSource(deps, type, { ...plan, filter: plan.filter });
  if (request.summaryCount) {
    return { resources: [], next: undefined, total: plan.exactCount ? await exactTotal() : await countOrRefuse(source), warnings };
  }
  const page = await collectPage(source, kind, request.count, request.pageToken);
  return { ...page, total: plan.exactCount ? await exactTotal() : wholeAnswer(page, request), warnings };
}

/** A first page with no next page is the whole answer: its length is the exact total, whatever the search. */
const wholeAnswer = (page: { resources: FhirResource[]; next: string | undefined }, request: SearchRequest) =>
  request.pageToken === undefined && page.next === undefined ? page.resources.length : undefined;

async function countOrRefuse(source: ItemSource): Promise<number> {
  const total = await countAll(source, COUNT_READ_LIMIT);
  if (total !== undefined) return total;
  throw new WardError('BAD_REQUEST', `Too many agents to count this search (over ${COUNT_READ_LIMIT}); narrow it by organization or identifier.`, {
    errors: [{ in: 'query', pointer: '/_summary', reason: 'too many to count' }],
  });
}

/** `Provenance?target=Device/<id>`: the agent's ledger leaves, oldest first. */
async function provenanceSearch(deps: SearchDeps, request: SearchRequest, kind: string): Promise<SearchAnswer> {
  const target = single(request.strings.get('target') ?? request.tokens.get('target')?.map((group) => group.map((token) => token.code)), 'target');
  if (target === undefined) {
    throw new WardError('BAD_REQUEST', 'Provenance is searched by target (target=Device/<id>).', { errors: [{ in: 'query', pointer: '/target', reason: 'required' }] });
  }
  const [targetType, id] = target.split('/').slice(-2);
  const ulid = targetType === 'Device' && id ? parseAgentId(id)?.ulid : undefined;
  if (ulid === undefined && /^https?:\/\//i.test(target)) return runProvenanceSearch(deps, target, request, kind);
  const record = ulid === undefined ? undefined : await deps.agents.get(ulid).catch(() => undefined);
  if (!record) return { resources: [], next: undefined, total: 0 };
  const context = { target: `Device/${ulid}`, registryId: deps.registryId, entriesUrl: deps.entriesUrl(), treeHead: await deps.treeHead() };
  const source: ItemSource = {
    async page(cursor, limit) {
      const leaves = await listLedgerLeavesOf(deps.storage.db, record.agent_id, { limit, ...(cursor === undefined ? {} : { afterLeafIndex: positionOf(cursor) }) });
      // Only leaves the signed tree head covers: one written since it was read waits for the next answer.
      const covered = leaves.filter((leaf) => leaf.leafIndex < context.treeHead.tree_size);
      const last = covered.at(-1);
      return { items: covered.map((leaf) => [provenanceOf(leaf, context)]), next: covered.length === limit && last ? String(last.leafIndex) : undefined };
    },
  };
  if (request.summaryCount) return { resources: [], next: undefined, total: await countOrRefuse(source) };
  const page = await collectPage(source, kind, request.count, request.pageToken);
  return { ...page, total: wholeAnswer(page, request) };
}

/** `Provenance?target=<url>`: the computer-use runs that opened that page, oldest first, one Provenance each. */
async function runProvenanceSearch(deps: SearchDeps, url: string, request: SearchRequest, kind: string): Promise<SearchAnswer> {
  const context = { registryId: deps.registryId, entriesUrl: deps.entriesUrl(), treeHead: await deps.treeHead() };
  const source: ItemSource = {
    async page(cursor, limit) {
      if (cursor !== undefined && !ULID.test(cursor)) positionOf('');
      const ids = await listRunIdsOpening(deps.storage.db, url, { limit, ...(cursor === undefined ? {} : { afterSessionId: cursor }) });
      const items = await Promise.all(ids.map(async (sessionId) => {
        const provenance = await runProvenance(deps.storage, sessionId, context);
        return provenance ? [provenance] : [];
      }));
      return { items, next: ids.length === limit ? ids.at(-1) : undefined };
    },
  };
  if (request.summaryCount) return { resources: [], next: undefined, total: await countOrRefuse(source) };
  const page = await collectPage(source, kind, request.count, request.pageToken);
  return { ...page, total: wholeAnswer(page, request) };
}

/** A run's Provenance from the leaves the signed tree head covers; undefined before its first is covered. */
export async function runProvenance(storage: Storage, sessionId: string, context: Omit<ProvenanceContext, 'target'>): Promise<FhirResource | undefined> {
  const leaves = await listLedgerLeavesOf(storage.db, sessionId, { limit: RUN_LEAVES_LISTED });
  return runProvenanceOf(sessionId, leaves.filter((leaf) => leaf.leafIndex < context.treeHead.tree_size), context);
}

/**
 * `_include=…:organization`: the owners the page's resources reference, each once. The reference is
 * the Organization id, which reads back to the `org_id` (fhir-resources.ts).
 */
export async function includedOrganizations(deps: SearchDeps, resources: readonly FhirResource[]): Promise<FhirResource[]> {
  const ids = new Set<string>();
  for (const resource of resources) {
    const reference = ((resource.owner ?? resource.managingOrganization) as { reference?: string } | undefined)?.reference;
    if (reference?.startsWith('Organization/')) ids.add(reference.slice('Organization/'.length));
  }
  const included = await Promise.all(
    [...ids].map(async (id) => {
      const read = readOrganizationId(id);
      if (read === undefined || !('orgId' in read)) return [];
      const [owner] = await listOwnerPage(deps.storage.db, { orgId: read.orgId }, { limit: 1 });
      return owner ? [organizationOf(owner.org_id, await deps.agents.get(owner.newest_agent_id), deps.registryId)] : [];
    }),
  );
  return included.flat();
}

/**
 * `Organization?_revinclude=Endpoint:organization`: the endpoints of the page's Organizations, at
 * most REVINCLUDE_LIMIT each (their agents in id order); `cut` names the Organizations that have more,
 * which the answer says in an outcome entry (search them by `Endpoint?organization=`).
 */
export async function revincludedEndpoints(deps: SearchDeps, organizations: readonly FhirResource[]): Promise<{ endpoints: FhirResource[]; cut: string[] }> {
  const cut: string[] = [];
  const endpoints = await Promise.all(
    organizations.map(async (organization) => {
      const read = readOrganizationId(organization.id);
      if (read === undefined || !('orgId' in read)) return [];
      const rows = await listAgentPage(deps.storage.db, { orgId: read.orgId }, { limit: REVINCLUDE_LIMIT + 1 });
      const found = (await toAgentRecords(deps.storage.db, rows)).flatMap(endpointsOf);
      if (found.length > REVINCLUDE_LIMIT) cut.push(organization.id);
      return found.slice(0, REVINCLUDE_LIMIT);
    }),
  );
  return { endpoints: endpoints.flat(), cut };
}

/** A position inside a page token (a ranking offset, a leaf index): digits only, else the token was not written here. */
function positionOf(cursor: string): number {
  if (!/^\d{1,15}$/.test(cursor)) {
    throw new WardError('BAD_REQUEST', 'The _page_token is not one this search issued.', { errors: [{ in: 'query', pointer: '/_page_token', reason: 'unknown page token' }] });
  }
  return Number(cursor);
}
