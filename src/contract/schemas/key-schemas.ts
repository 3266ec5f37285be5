import { Type } from 'typebox';
import { SCOPES } from '../../core/call-context.ts';
import { ORG_ID_PATTERN } from '../../core/ids.ts';
import { PRICING_TIER_NAMES } from '../../core/pricing-tiers.ts';
import { Cursor, Nullable, PageLimit, StringEnum, Timestamp } from './common.ts';

export const OrgId = Type.String({ pattern: ORG_ID_PATTERN });
const Limit = Nullable(Type.Integer({ minimum: 0, maximum: 1_000_000_000 }));

export const LimitOverridesSchema = Type.Object(
  {
    requests_per_minute: Type.Optional(Limit),
    requests_per_day: Type.Optional(Limit),
    max_agents: Type.Optional(Limit),
    discovery_per_minute: Type.Optional(Limit),
    routing_per_minute: Type.Optional(Limit),
  },
  { additionalProperties: false, description: 'Enterprise only: custom figures; null = unlimited', title: 'LimitOverrides' },
);

export const CreateApiKeyBody = Type.Object(
  {
    org_id: OrgId,
    display_name: Type.String({ minLength: 1, maxLength: 200 }),
    tier: Type.Optional(StringEnum(PRICING_TIER_NAMES)),
    scopes: Type.Optional(Type.Array(StringEnum(SCOPES), { minItems: 1, maxItems: 4, uniqueItems: true })),
    expires_at: Type.Optional(Timestamp),
    limits: Type.Optional(LimitOverridesSchema),
  },
  { additionalProperties: false, title: 'ApiKeyRequest' },
);

const keyFields = {
  key_id: Type.String(),
  org_id: Type.String(),
  display_name: Type.String(),
  tier: StringEnum(PRICING_TIER_NAMES),
  scopes: Type.Array(Type.String()),
  key_prefix: Type.String({ description: 'The first characters of the raw key, to recognise it' }),
  active: Type.Boolean(),
  created_at: Timestamp,
  expires_at: Nullable(Timestamp),
  revoked_at: Nullable(Timestamp),
  last_used_at: Nullable(Timestamp),
  limits: Nullable(Type.Object({}, { additionalProperties: true })),
};

export const ApiKeySchema = Type.Object(keyFields, { title: 'ApiKey' });

export const CreatedApiKeySchema = Type.Object(
  {
    ...keyFields,
    raw_key: Type.Optional(Type.String({ description: 'Returned once, in the first answer; absent from a replay' })),
  },
  { title: 'CreatedApiKey' },
);

export const ApiKeyListSchema = Type.Object({ api_keys: Type.Array(ApiKeySchema), next_cursor: Nullable(Type.String()) }, { title: 'ApiKeyList' });

export const ListApiKeysQuery = Type.Object(
  { org_id: Type.Optional(OrgId), cursor: Type.Optional(Cursor), limit: Type.Optional(PageLimit) },
  { additionalProperties: false },
);

export const KeyIdParams = Type.Object({ key_id: Type.String({ pattern: '^key_[0-9A-Z]{26}$' }) });

const Figure = Nullable(Type.Integer());
export const TiersSchema = Type.Object({
  tiers: Type.Array(
    Type.Object({
      name: StringEnum(PRICING_TIER_NAMES),
      requests_per_minute: Figure,
      requests_per_day: Figure,
      max_agents: Figure,
      discovery_per_minute: Figure,
      routing_per_minute: Figure,
      federation: Type.Boolean(),
      events_sse: Type.Boolean(),
      sla: Nullable(Type.String()),
    }, { title: 'PricingTier' }),
  ),
}, { title: 'PricingTierList' });
