import { Type } from 'typebox';
import { PRICING_TIER_NAMES } from '../../core/pricing-tiers.ts';
import { KeyIdParams, OrgId } from './key-schemas.ts';
import { Nullable, StringEnum, Timestamp } from './common.ts';

const Count = Type.Integer({ minimum: 0 });

/** One count per operation class (docs/api.md "Limits and usage"). */
const ClassCounts = {
  general: Type.Integer({ minimum: 0, description: 'Requests admitted (every class)' }),
  discovery: Type.Integer({ minimum: 0, description: 'Admitted GET /v1/discover' }),
  routing: Type.Integer({ minimum: 0, description: 'Admitted POST /v1/route' }),
  rate_limited: Type.Integer({ minimum: 0, description: 'Requests refused with 429' }),
};

const UsageCounts = Type.Object(ClassCounts, { title: 'UsageCounts' });

export const UsageSummaryQuery = Type.Object(
  {
    since: Timestamp,
    until: Timestamp,
    org_id: Type.Optional(OrgId),
    key_id: Type.Optional(KeyIdParams.properties.key_id),
  },
  { additionalProperties: false },
);

export const UsageSummarySchema = Type.Object(
  {
    since: Timestamp,
    until: Timestamp,
    totals: UsageCounts,
    keys: Type.Array(
      Type.Object({
        key_id: Type.String(),
        org_id: Type.String(),
        totals: UsageCounts,
        days: Type.Array(
          Type.Object({ day: Type.String({ description: 'UTC day, YYYY-MM-DD' }), ...ClassCounts }),
        ),
      }),
    ),
  },
  { title: 'UsageSummary' },
);

const Tokens = Nullable(Count);

export const LiveUsageSchema = Type.Object(
  {
    key_id: Type.String(),
    tier: StringEnum(PRICING_TIER_NAMES),
    daily_count: Count,
    daily_limit: Nullable(Count),
    tokens_remaining: Type.Object(
      { general: Tokens, discovery: Tokens, routing: Tokens },
      { description: 'Whole tokens per bucket; null = unlimited' },
    ),
    reset_at: Timestamp,
  },
  { title: 'LiveUsage' },
);
