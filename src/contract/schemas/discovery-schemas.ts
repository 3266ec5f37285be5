import { Type, type TSchema } from 'typebox';
import { PURPOSES_OF_USE, TOKEN_BINDINGS } from '../agent-record.ts';
import { AgentRecordSchema } from './agent-schemas.ts';
import { JurisdictionInput, JwksSchema, Nullable, PageLimit, StringEnum } from './common.ts';

const Skill = Type.String({ pattern: '^[a-z0-9]+(?:[._-][a-z0-9]+)*$', maxLength: 128, description: 'e.g. consent.verify' });
const Token = Type.String({ pattern: '^[a-z0-9][a-z0-9._+-]{0,63}$' });
const Region = Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,63}$' });

export const DiscoverQuery = Type.Object(
  {
    capability: Skill,
    jurisdiction: Type.Optional(JurisdictionInput),
    require_features: Type.Optional(
      Type.Array(Type.String({ maxLength: 2048 }), { maxItems: 32, description: 'repeated, or a comma list' }),
    ),
    protocol: Type.Optional(Token),
    token_binding: Type.Optional(StringEnum(TOKEN_BINDINGS)),
    residency: Type.Optional(Region),
    purpose_of_use: Type.Optional(StringEnum(PURPOSES_OF_USE)),
    limit: Type.Optional(PageLimit),
    federated: Type.Optional(Type.Boolean({ description: 'also ask child registries (root and sovereign registries; tiers with Federation = yes)' })),
  },
  { additionalProperties: false },
);

const ScoreBreakdown = Type.Object({
  trust_level: Type.Number(),
  health: Type.Number(),
  jurisdiction: Type.Number(),
  priority: Type.Number(),
}, { title: 'ScoreBreakdown' });

export const DiscoveryResultSchema = Type.Object({
  ...AgentRecordSchema.properties,
  score: Type.Number(),
  score_breakdown: ScoreBreakdown,
  trust_bundle_url: Type.String({ format: 'uri' }),
  registry_id: Type.Optional(Type.String({ description: 'federated answers only: the registry holding the agent' })),
}, { title: 'DiscoveryResult', description: 'An agent record with its discovery score' });

/**
 * DiscoveryResultSchema as a JSON Schema validator reads it, for checking results that come from
 * another registry: the OpenAPI 3.0 `nullable: true` the serializer honours means nothing to TypeBox's
 * compiler, so each such schema becomes `anyOf: [schema, {type: 'null'}]`.
 */
export const DiscoveryResultCheckSchema = nullableAsAnyOf(DiscoveryResultSchema) as TSchema;

function nullableAsAnyOf(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(nullableAsAnyOf);
  if (typeof schema !== 'object' || schema === null) return schema;
  const { nullable, ...rest } = schema as Record<string, unknown>;
  const mapped = Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, nullableAsAnyOf(value)]));
  return nullable === true ? { anyOf: [mapped, { type: 'null' }] } : mapped;
}

export const DiscoveryResponseSchema = Type.Object(
  {
    query: Type.Object({}, { additionalProperties: true, description: 'The filters as applied' }),
    results: Type.Array(DiscoveryResultSchema),
    result_count: Type.Integer(),
    federation: Type.Optional(
      Type.Object(
        {
          partial: Type.Boolean({ description: 'true when a child registry that was asked did not answer usably' }),
          children: Type.Array(
            Type.Object({
              registry_id: Type.String(),
              status: StringEnum(['ok', 'timeout', 'unreachable', 'error'] as const),
              result_count: Type.Integer(),
              error: Type.Optional(Type.String()),
              partial: Type.Optional(Type.Boolean({ description: "the child's own answer was partial" })),
            }),
          ),
        },
        { description: 'federated answers only: what each child registry answered' },
      ),
    ),
    signed_response: Type.Optional(Type.String({ description: 'JWS over {query, results, result_count, iss, iat} (and federation, when present)' })),
  },
  { title: 'DiscoveryResponse' },
);

export const RouteBody = Type.Object(
  {
    target: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'agent URI' })),
    target_agent_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 256, description: 'agent URI: the name the MCP `route` tool uses; the same as `target` (send one of them)' }),
    ),
    capability: Type.Optional(Skill),
    jurisdiction: Type.Optional(JurisdictionInput),
    protocol: Type.Optional(Token),
    required_features: Type.Optional(Type.Array(Token, { maxItems: 32 })),
    residency: Type.Optional(
      Type.Object(
        {
          allowed_zones: Type.Optional(Type.Array(Region, { maxItems: 32 })),
          deny_cross_zone: Type.Optional(Type.Boolean()),
        },
        { additionalProperties: false },
      ),
    ),
    workload: Type.Optional(
      Type.Object(
        {
          token_binding: Type.Optional(StringEnum(TOKEN_BINDINGS)),
          priority: Type.Optional(StringEnum(['low', 'normal', 'high', 'critical'] as const)),
        },
        { additionalProperties: false },
      ),
    ),
    purpose: Type.Optional(
      Type.Object({ purpose_of_use: Type.Optional(StringEnum(PURPOSES_OF_USE)) }, { additionalProperties: false }),
    ),
    caller_jurisdiction: Type.Optional(JurisdictionInput),
  },
  { additionalProperties: false, title: 'RouteRequest' },
);

const RoutedEndpoint = {
  endpoint: Type.String(),
  url: Type.String(),
  priority: Type.Integer(),
  protocol: Type.String(),
  region: Nullable(Type.String()),
};

export const TrustBundleSchema = Type.Object(
  {
    subject: Type.String(),
    issuer: Type.String(),
    certificates: Type.Array(Type.String()),
    jwks: JwksSchema,
    attestations: Type.Array(Type.String()),
    delegation_chain: Type.Array(Type.String()),
    statements: Type.Array(Type.String()),
    trust_level: Type.Integer(),
    issued_at: Type.String({ format: 'date-time' }),
    expires_at: Type.String({ format: 'date-time' }),
    trust_chain: Type.Optional(Type.Array(Type.String(), { description: "OpenID Federation trust chain from the issuer to the root (compact JWSs: the issuer's entity configuration, the superiors' statements, the root's configuration)" })),
    trust_marks: Type.Optional(
      Type.Array(Type.Object({ trust_mark_type: Type.String(), id: Type.Optional(Type.String({ description: 'trust_mark_type again, for pre-final OIDF resolvers' })), trust_mark: Type.String({ description: 'A trust-mark+jwt by the issuer' }) }), { description: 'OpenID Federation trust marks the issuer gives the subject' }),
    ),
    signed_bundle: Type.String({ description: 'JWS by the registry over the other fields' }),
  },
  { title: 'TrustBundle' },
);

export const RoutingResponseSchema = Type.Object(
  {
    resolved_target: Type.String(),
    selected: Type.Object({ ...RoutedEndpoint, weight: Type.Integer(), health: Type.String() }),
    alternatives: Type.Array(Type.Object(RoutedEndpoint)),
    trust_bundle: TrustBundleSchema,
    constraints: Type.Object({
      phi_allowed: Type.Boolean(),
      max_concurrency_hint: Type.Integer(),
      rate_limit_rps_hint: Type.Integer(),
    }),
    evidence: Type.Object({
      registry_id: Type.String(),
      record_version: Type.String(),
      delegation_chain: Type.Array(Type.String()),
    }),
    signed_response: Type.Optional(Type.String({ description: 'JWS over this response without signed_response' })),
  },
  { title: 'RoutingResponse' },
);

export const TrustBundleQuery = Type.Object(
  { subject: Type.String({ minLength: 1, maxLength: 256, description: 'agent or registry URI' }) },
  { additionalProperties: false },
);

/** The trust anchor's schema lives with the registry schemas (a child registry's anchors are the same type). */
export { TrustAnchorSchema } from './registry-schemas.ts';
