/**
 * Agent records as FHIR R4 resources (docs/fhir.md has the mapping table): each agent is a `Device`
 * (the AI system), each of its endpoints an `Endpoint`, each owner an `Organization`. Everything here
 * comes from the agent record alone, which the PHI guard checked when it was written, so no resource
 * can carry health data.
 *
 * Ids are stable and derived from the registry's own: a Device's is the agent's ULID; an Endpoint's the
 * ULID and a digest of its address (so reordering endpoints keeps their ids); an Organization's the
 * owner's `org_id` with the characters FHIR ids may not hold escaped (`-` as `--`, `_` as `-u`, `:` as
 * `-c`), so it reads back without a lookup; an `org_id` too long for that (FHIR ids end at 64
 * characters) is `-` and a digest instead, which no escaped id can start with.
 */
import { createHash } from 'node:crypto';
import type { AgentRecord, Endpoint, EndpointHealth } from '../../contract/agent-record.ts';
import {
  connectionTypeOf,
  DEVICE_TYPE_AI_AGENT,
  ENDPOINT_REGION_EXTENSION,
  HL7_PAYLOAD_TYPE,
  URI_IDENTIFIER_SYSTEM,
  WARD_CODE_SYSTEMS,
} from '../../contract/fhir-vocabulary.ts';
import { parseAgentId } from '../../core/ids.ts';

export type FhirResource = { resourceType: string; id: string; [element: string]: unknown };

type Coding = { system: string; code: string; display?: string };

const digest = (text: string, length: number) => createHash('sha256').update(text).digest('hex').slice(0, length);

export const deviceId = (record: AgentRecord): string => parseAgentId(record.agent_id)?.ulid ?? digest(record.agent_id, 40);
export const endpointId = (record: AgentRecord, endpoint: Pick<Endpoint, 'url'>): string => `${deviceId(record)}-${digest(endpoint.url, 12)}`;
export function organizationId(orgId: string): string {
  const escaped = orgId.replace(/[-_:]/g, (c) => ORG_ID_ESCAPES[c] as string);
  return escaped.length <= 64 ? escaped : `-${digest(orgId, 40)}`;
}

const ORG_ID_ESCAPES: Readonly<Record<string, string>> = { '-': '--', _: '-u', ':': '-c' };
const ORG_ID_UNESCAPES: Readonly<Record<string, string>> = { '--': '-', '-u': '_', '-c': ':' };

/**
 * The `org_id` an Organization id stands for: `{ orgId }` when it reads back, `{ digest }` for the
 * digest form (the caller finds the owner by it), undefined when it is no id this server issues.
 */
export function readOrganizationId(id: string): { orgId: string } | { digest: string } | undefined {
  if (/^-[0-9a-f]{40}$/.test(id)) return { digest: id.slice(1) };
  if (!/^[A-Za-z0-9][A-Za-z0-9.-]{0,63}$/.test(id)) return undefined;
  let orgId = '';
  for (let at = 0; at < id.length; at += 1) {
    const c = id[at] as string;
    if (c !== '-') {
      orgId += c;
      continue;
    }
    const escape = ORG_ID_UNESCAPES[id.slice(at, at + 2)];
    if (escape === undefined) return undefined;
    orgId += escape;
    at += 1;
  }
  return { orgId };
}

/** Whether `orgId` is the owner a digest-form Organization id stands for. */
export const hasOrganizationDigest = (orgId: string, wanted: string): boolean => digest(orgId, 40) === wanted;

function meta(record: AgentRecord) {
  return { versionId: String(record.version), lastUpdated: record.updated_at };
}

function owner(record: AgentRecord): { reference: string; display?: string } | undefined {
  const orgId = record.owner.org_id;
  if (!orgId) return undefined;
  return { reference: `Organization/${organizationId(orgId)}`, ...(record.owner.org_name ? { display: record.owner.org_name } : {}) };
}

const property = (code: string, values: Coding[]) => ({ type: { coding: [{ system: WARD_CODE_SYSTEMS.deviceProperty, code }] }, valueCode: values.map((coding) => ({ coding: [coding] })) });

/** The agent as a `Device`: the AI system, its owner, its status, and its capabilities and trust posture as properties. */
export function deviceOf(record: AgentRecord): FhirResource {
  const org = owner(record);
  const best = [...record.endpoints].sort((a, b) => a.priority - b.priority)[0];
  const { capabilities, trust_validation: trust } = record;
  const properties = [
    property('registry-status', [{ system: WARD_CODE_SYSTEMS.recordStatus, code: record.status }]),
    property('jurisdiction', [{ system: 'urn:iso:std:iso:3166', code: record.jurisdiction }]),
    property('trust-state', [{ system: WARD_CODE_SYSTEMS.recordStatus, code: `trust-${trust.state}` }]),
    { type: { coding: [{ system: WARD_CODE_SYSTEMS.deviceProperty, code: 'trust-level' }] }, valueQuantity: [{ value: trust.level }] },
    property('token-binding', [{ system: WARD_CODE_SYSTEMS.deviceProperty, code: `token-binding-${capabilities.token_binding}` }]),
    ...(capabilities.skills.length > 0 ? [property('skill', capabilities.skills.map((code) => ({ system: WARD_CODE_SYSTEMS.skill, code })))] : []),
    ...(capabilities.protocols.length > 0 ? [property('protocol', capabilities.protocols.map((code) => ({ system: WARD_CODE_SYSTEMS.connectionType, code })))] : []),
    ...(capabilities.features.length > 0 ? [property('feature', capabilities.features.map((code) => ({ system: WARD_CODE_SYSTEMS.deviceProperty, code: `feature-${code}` })))] : []),
  ];
  return {
    resourceType: 'Device',
    id: deviceId(record),
    meta: meta(record),
    identifier: [{ system: URI_IDENTIFIER_SYSTEM, value: record.agent_id }],
    status: record.status === 'active' ? 'active' : 'inactive',
    deviceName: [{ name: record.display_name, type: 'user-friendly-name' }],
    type: { coding: [DEVICE_TYPE_AI_AGENT], text: DEVICE_TYPE_AI_AGENT.display },
    version: [{ type: { text: 'registry record version' }, value: String(record.version) }],
    ...(org ? { owner: org } : {}),
    ...(record.owner.operator ? { contact: [{ system: 'email', value: record.owner.operator }] } : {}),
    ...(best ? { url: best.url } : {}),
    ...(record.description ? { note: [{ text: record.description }] } : {}),
    property: properties,
  };
}

/**
 * `Endpoint.status` from the record and the endpoint's health: a revoked or retired agent's endpoints
 * are `off`, a suspended one's `suspended`, an active agent's endpoint `error` when its last probe
 * failed and `active` otherwise (never probed included: nothing says it is down).
 */
export function endpointStatus(record: AgentRecord, health: EndpointHealth): 'active' | 'suspended' | 'error' | 'off' {
  if (record.status === 'revoked' || record.status === 'retired') return 'off';
  if (record.status === 'suspended') return 'suspended';
  return health.status === 'unhealthy' ? 'error' : 'active';
}

/** One `Endpoint` per endpoint of the agent, in the record's order. */
export function endpointsOf(record: AgentRecord): FhirResource[] {
  const org = owner(record);
  return record.endpoints.map((endpoint) => ({
    resourceType: 'Endpoint',
    id: endpointId(record, endpoint),
    meta: meta(record),
    identifier: [{ system: URI_IDENTIFIER_SYSTEM, value: record.agent_id }],
    status: endpointStatus(record, endpoint.health),
    connectionType: connectionTypeOf(endpoint.protocol),
    name: `${record.display_name} (${endpoint.protocol})`,
    ...(org ? { managingOrganization: org } : {}),
    payloadType: [{ coding: [{ system: HL7_PAYLOAD_TYPE, code: 'any', display: 'Any' }] }],
    payloadMimeType: ['application/json'],
    address: endpoint.url,
    ...(endpoint.region ? { extension: [{ url: ENDPOINT_REGION_EXTENSION, valueString: endpoint.region }] } : {}),
  }));
}

/** The owner as an `Organization`, from the newest record that names it. */
export function organizationOf(orgId: string, newest: AgentRecord, registryId: string): FhirResource {
  return {
    resourceType: 'Organization',
    id: organizationId(orgId),
    meta: { lastUpdated: newest.updated_at },
    identifier: [{ system: registryId, value: orgId }],
    active: true,
    name: newest.owner.org_name ?? orgId,
  };
}
