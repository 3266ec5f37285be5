import { Type } from 'typebox';
import { SCOPES } from '../../core/call-context.ts';
import { Nullable, StringEnum, Timestamp } from './common.ts';

const Count = Type.Integer({ minimum: 0 });

const EndpointRef = {
  agent_id: Type.String(),
  display_name: Nullable(Type.String()),
  endpoint_index: Count,
  url: Type.String(),
};

export const OverviewSchema = Type.Object(
  {
    generated_at: Timestamp,
    agents: Type.Object({
      total: Count,
      by_status: Type.Object({ active: Count, suspended: Count, revoked: Count, retired: Count }),
      by_trust_state: Type.Object({ validated: Count, failed: Count, pending: Count }),
    }),
    endpoints: Type.Object({
      total: Type.Integer({ description: "Endpoints the active agents declare" }),
      healthy: Count,
      degraded: Type.Integer({ description: 'Healthy, but answering the probe in degraded_latency_ms or more' }),
      down: Count,
      unknown: Type.Integer({ description: 'Not probed (no health_url) or not probed yet' }),
      degraded_latency_ms: Count,
    }),
    endpoints_down: Type.Array(
      Type.Object({ ...EndpointRef, reason: Nullable(Type.String()), checked_at: Timestamp, down_since: Nullable(Timestamp) }),
    ),
    endpoints_flapping: Type.Array(Type.Object({ ...EndpointRef, changes_last_hour: Count, last_change_at: Timestamp })),
    trust_expiring: Type.Array(
      Type.Object({ agent_id: Type.String(), display_name: Type.String(), status: Type.String(), expires_at: Timestamp }),
    ),
    health_history: Type.Array(Type.Object({ at: Timestamp, healthy: Count, down: Count, unknown: Count }), {
      description: 'Endpoint health each hour over the last day, replayed from agent.health_changed events',
    }),
    traffic: Type.Object({
      instance_id: Type.String(),
      minutes: Type.Array(Type.Object({ at: Timestamp, requests: Count, client_errors: Count, server_errors: Count }), {
        description: "This instance's answers per minute over the last hour, oldest first",
      }),
    }),
  },
  { title: 'Overview' },
);

export const DiagnosticsSchema = Type.Object(
  {
    version: Type.String(),
    node_version: Type.String(),
    instance_id: Type.String(),
    started_at: Timestamp,
    uptime_s: Count,
    registry: Type.Object({
      registry_id: Type.String(),
      tier: Type.String(),
      jurisdiction: Type.String(),
      base_url: Type.String(),
      environment: Type.String(),
      auth_mode: Type.String(),
    }),
    storage: Type.Object({
      backend: StringEnum(['sqlite', 'postgres'] as const),
      migrations: Type.Object({ applied: Count, expected: Count, latest: Nullable(Type.String()), pending: Type.Array(Type.String()) }),
    }),
    events: Type.Object({ last_seq: Count, oldest_retained_seq: Count, retention_days: Count }),
    ledger: Type.Object({ tree_size: Count }),
    instances: Type.Object({ live: Nullable(Type.Integer({ description: 'Instances with a current heartbeat; null when this one is not listening' })) }),
    redis: Type.Object({ configured: Type.Boolean(), reachable: Nullable(Type.Boolean()), latency_ms: Nullable(Count) }),
    discovery_cache: Type.Object({ hits: Count, misses: Count, entries: Count, max_entries: Count, hit_ratio: Nullable(Type.Number()) }),
    health_prober: Type.Object({
      enabled: Type.Boolean(),
      interval_ms: Count,
      last_round: Nullable(Type.Object({ at: Timestamp, probed: Count })),
    }),
    configuration: Type.Object({}, { additionalProperties: true, description: 'Effective configuration; secrets are "[redacted]"' }),
    configuration_sources: Type.Optional(
      Type.Record(Type.String(), StringEnum(['environment', 'file', 'default', 'unknown'] as const), {
        description: 'Where each variable of `configuration` came from: the environment, a file another variable names, or the default (`unknown` for a configuration built in code)',
      }),
    ),
  },
  { title: 'Diagnostics' },
);

export const CallerSchema = Type.Object(
  {
    kind: StringEnum(['anonymous', 'api_key', 'jwt', 'mtls', 'dpop', 'registry'] as const),
    credential_id: Type.String({ description: 'The API key id, or <mode>:<sub> for a token' }),
    org_id: Nullable(Type.String()),
    scopes: Type.Array(StringEnum(SCOPES)),
    tier: Nullable(Type.String()),
  },
  { title: 'Caller' },
);
