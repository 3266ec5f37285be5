import type { ColumnType } from 'kysely';

/**
 * Table shapes as the query layer sees them. Timestamps are RFC 3339 UTC strings with milliseconds in
 * both back-ends (they sort as text), JSON documents are text, so one set of migrations and one
 * store implementation serve SQLite and PostgreSQL alike (docs/decisions.md).
 */
export type Database = {
  agents: AgentsTable;
  events: EventsTable;
  event_sequence: EventSequenceTable;
  idempotency_keys: IdempotencyKeysTable;
  signing_keys: SigningKeysTable;
};

export type AgentsTable = {
  id: string;
  agent_uri: string;
  jurisdiction: string;
  status: string;
  display_name: string;
  org_id: string | null;
  version: number;
  trust_state: string;
  trust_level: number;
  record: string;
  created_at: string;
  updated_at: string;
};

/** PostgreSQL returns BIGINT as a string; the stores convert. */
export type EventsTable = {
  seq: ColumnType<number | string, number, never>;
  type: string;
  occurred_at: string;
  subject: string;
  data: string;
};

export type EventSequenceTable = {
  id: number;
  last_seq: ColumnType<number | string, number, number>;
};

export type IdempotencyKeysTable = {
  scope_key: string;
  request_hash: string;
  state: string;
  status_code: number | null;
  response_headers: string | null;
  response_body: string | null;
  locked_until: string;
  expires_at: string;
  created_at: string;
};

export type SigningKeysTable = {
  kid: string;
  alg: string;
  public_jwk: string;
  private_jwk: string;
  active: number | null;
  not_before: string;
  not_after: string | null;
  created_at: string;
};
