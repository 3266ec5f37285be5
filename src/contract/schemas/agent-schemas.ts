import { Type } from 'typebox';
import { AGENT_STATUSES, PURPOSES_OF_USE, TOKEN_BINDINGS } from '../agent-record.ts';
import { OrgId } from './key-schemas.ts';
import { Cursor, JurisdictionInput, Nullable, PageLimit, StringEnum, Timestamp } from './common.ts';

const Url = Type.String({ format: 'uri', maxLength: 2048 });
const HttpUrl = Type.String({ format: 'uri', maxLength: 2048, pattern: '^https?://' });
const Token = (description: string) =>
  Type.String({ pattern: '^[a-z0-9][a-z0-9._+-]{0,63}$', description });
const Element = Type.String({ minLength: 1, maxLength: 16384 });

export const EndpointInput = Type.Object(
  {
    url: Url,
    protocol: Token('e.g. mesh-a2a-jsonrpc, fhir-rest, hl7v2-mllp'),
    priority: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 100 })),
    weight: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
    health_url: Type.Optional(HttpUrl),
    region: Type.Optional(Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,63}$', description: 'data-residency zone' })),
  },
  { additionalProperties: false, title: 'EndpointInput' },
);

export const CapabilitiesInput = Type.Object(
  {
    protocols: Type.Optional(Type.Array(Token('protocol name'), { maxItems: 32, default: [] })),
    skills: Type.Optional(
      Type.Array(
        Type.String({ pattern: '^[a-z0-9]+(?:[._-][a-z0-9]+)*$', maxLength: 128, description: 'e.g. consent.verify' }),
        { maxItems: 64, default: [] },
      ),
    ),
    features: Type.Optional(Type.Array(Token('feature flag'), { maxItems: 64, default: [] })),
    token_binding: Type.Optional(StringEnum(TOKEN_BINDINGS)),
    fhir_r4: Type.Optional(Type.Boolean()),
    consent_support: Type.Optional(Type.Boolean()),
    stream_resume: Type.Optional(Type.Boolean()),
  },
  {
    // Other boolean flags are allowed: require_features matches every flag set true (contract §3).
    additionalProperties: Type.Boolean(),
    maxProperties: 64,
    title: 'Capabilities',
  },
);

export const TrustInput = Type.Object(
  {
    certificates: Type.Optional(Type.Array(Element, { maxItems: 16, default: [] })),
    signatures: Type.Optional(Type.Array(Element, { maxItems: 16, default: [] })),
    attestations: Type.Optional(Type.Array(Element, { maxItems: 16, default: [] })),
    jwks: Type.Optional(
      Type.Object(
        { keys: Type.Array(Type.Object({ kty: Type.String() }, { additionalProperties: true }), { maxItems: 32 }) },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, title: 'TrustMaterial', description: 'Certificates, signatures, attestations and keys the trust validation checks' },
);

export const OwnerInput = Type.Object(
  {
    org_id: Type.Optional(OrgId),
    org_name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    operator: Type.Optional(Type.String({ minLength: 1, maxLength: 320 })),
  },
  { additionalProperties: false, title: 'Owner' },
);

const PolicyValue = Type.Union([
  Type.String({ maxLength: 256 }),
  Type.Number(),
  Type.Boolean(),
  Type.Array(Type.String({ maxLength: 256 }), { maxItems: 64 }),
]);

export const PolicyTagsInput = Type.Object(
  {
    purpose_of_use: Type.Optional(Type.Array(StringEnum(PURPOSES_OF_USE), { maxItems: 4, uniqueItems: true })),
    phi_allowed: Type.Optional(Type.Boolean()),
    max_concurrency: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
    rate_limit_rps: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  },
  { additionalProperties: PolicyValue, maxProperties: 64, description: 'ABAC policy tags', title: 'PolicyTags' },
);

const documentFields = {
  display_name: Type.String({ minLength: 1, maxLength: 200 }),
  endpoints: Type.Array(EndpointInput, { minItems: 1, maxItems: 16 }),
  capabilities: CapabilitiesInput,
  trust: TrustInput,
  owner: Type.Optional(OwnerInput),
  description: Type.Optional(Type.String({ maxLength: 4000 })),
  policy_tags: Type.Optional(PolicyTagsInput),
};

export const RegisterAgentBody = Type.Object(
  { ...documentFields, jurisdiction: JurisdictionInput },
  { additionalProperties: false, title: 'AgentRegistration' },
);

/** PUT is a full replacement of the writable fields; jurisdiction is part of the agent's URI and fixed. */
export const UpdateAgentBody = Type.Object(documentFields, { additionalProperties: false, title: 'AgentReplacement' });

export const StatusChangeBody = Type.Object(
  { reason: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })) },
  { additionalProperties: false },
);

export const AgentIdParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 256, description: 'ULID, or the agent URI percent-encoded' }),
});

export const ListAgentsQuery = Type.Object(
  {
    jurisdiction: Type.Optional(JurisdictionInput),
    status: Type.Optional(StringEnum(AGENT_STATUSES)),
    org_id: Type.Optional(OrgId),
    q: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'Text the display name contains (any case), or an agent id (ULID or URI)' }),
    ),
    cursor: Type.Optional(Cursor),
    limit: Type.Optional(PageLimit),
  },
  { additionalProperties: false },
);

const EndpointView = Type.Object({
  url: Type.String(),
  protocol: Type.String(),
  priority: Type.Integer(),
  weight: Type.Integer(),
  health_url: Type.Optional(Type.String()),
  region: Type.Optional(Type.String()),
  health: Type.Object(
    {
      status: StringEnum(['healthy', 'unhealthy', 'unknown'] as const),
      checked_at: Nullable(Timestamp),
      latency_ms: Nullable(Type.Number()),
      reason: Nullable(Type.String({ description: 'Why the last probe failed; `no_health_url` for an endpoint never probed because it has no health_url; null when healthy or not probed yet' })),
    },
    { title: 'EndpointHealth' },
  ),
}, { title: 'Endpoint' });

export const AgentRecordSchema = Type.Object(
  {
    agent_id: Type.String({ description: 'registry://<jurisdiction>/agents/<ULID>' }),
    display_name: Type.String(),
    jurisdiction: Type.String(),
    status: StringEnum(AGENT_STATUSES),
    status_reason: Nullable(Type.String()),
    endpoints: Type.Array(EndpointView),
    capabilities: Type.Object({}, { additionalProperties: true }),
    trust: Type.Object({}, { additionalProperties: true }),
    owner: Type.Object({}, { additionalProperties: true }),
    description: Nullable(Type.String()),
    policy_tags: Type.Object({}, { additionalProperties: true }),
    version: Type.Integer(),
    trust_validation: Type.Object(
      {
        state: StringEnum(['pending', 'validated', 'failed'] as const),
        level: Type.Integer(),
        checked_at: Nullable(Timestamp),
        errors: Type.Array(Type.Object({ code: Type.String(), pointer: Type.String(), message: Type.String() })),
        expires_at: Type.Optional(Nullable(Timestamp)),
      },
      { title: 'TrustValidation' },
    ),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'AgentRecord' },
);

export const AgentListSchema = Type.Object(
  { agents: Type.Array(AgentRecordSchema), next_cursor: Nullable(Type.String()), total_count: Type.Integer() },
  { title: 'AgentList' },
);

/** `POST /v1/agents/from-card`: the card's URL; the record's name, endpoints, skills and security come from the card. */
export const RegisterFromCardBody = Type.Object(
  {
    card_url: Type.String({ ...HttpUrl, description: "The agent card's URL, e.g. https://agent.example.org/.well-known/agent-card.json" }),
    jurisdiction: JurisdictionInput,
    owner: Type.Optional(OwnerInput),
    policy_tags: Type.Optional(PolicyTagsInput),
  },
  { additionalProperties: false },
);

/** The record registered from a card, and where it came from. */
export const AgentFromCardSchema = Type.Object(
  {
    ...AgentRecordSchema.properties,
    source: Type.Object({
      kind: Type.Literal('a2a-agent-card'),
      card_url: Type.String(),
      signed_by: Nullable(Type.Object({ kid: Type.String(), jku: Nullable(Type.String()) })),
      read_at: Timestamp,
    }),
  },
  { title: 'AgentFromCard' },
);
