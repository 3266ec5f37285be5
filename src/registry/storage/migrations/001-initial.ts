import type { Kysely } from 'kysely';
import { createTable } from './create-table.ts';

/**
 * The registry's first tables: agents, the event log with its gap-free counter, idempotency records
 * and the registry's signing keys. Types are the common subset of SQLite and PostgreSQL.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createTable(db, 'agents', {
    id: 'text primary key',
    agent_uri: 'text not null unique',
    jurisdiction: 'text not null',
    status: 'text not null',
    display_name: 'text not null',
    org_id: 'text',
    version: 'integer not null',
    trust_state: 'text not null',
    trust_level: 'integer not null',
    record: 'text not null',
    created_at: 'text not null',
    updated_at: 'text not null',
  });
  // List filters page by id (ULIDs sort by creation time) within jurisdiction and status.
  await db.schema.createIndex('agents_jurisdiction_status_id').on('agents').columns(['jurisdiction', 'status', 'id']).execute();
  await db.schema.createIndex('agents_status_id').on('agents').columns(['status', 'id']).execute();
  // The AGENT_CONFLICT check: one non-revoked agent per organisation and display name.
  await db.schema.createIndex('agents_org_name').on('agents').columns(['org_id', 'display_name']).execute();

  await createTable(db, 'events', {
    seq: 'bigint primary key',
    type: 'text not null',
    occurred_at: 'text not null',
    subject: 'text not null',
    data: 'text not null',
  });
  await db.schema.createIndex('events_occurred_at').on('events').column('occurred_at').execute();

  // One row whose update both numbers an event and serialises writers, so sequence numbers are
  // gap-free in commit order (a reader never sees seq n+1 before n).
  await createTable(db, 'event_sequence', {
    id: 'integer primary key',
    last_seq: 'bigint not null',
  });
  await db.insertInto('event_sequence' as never).values({ id: 1, last_seq: 0 } as never).execute();

  await createTable(db, 'idempotency_keys', {
    scope_key: 'text primary key',
    request_hash: 'text not null',
    state: 'text not null',
    status_code: 'integer',
    response_headers: 'text',
    response_body: 'text',
    locked_until: 'text not null',
    expires_at: 'text not null',
    created_at: 'text not null',
  });
  await db.schema.createIndex('idempotency_keys_expires_at').on('idempotency_keys').column('expires_at').execute();

  // `active` is 1 for the current signing key and NULL otherwise; the unique index allows one 1.
  await createTable(db, 'signing_keys', {
    kid: 'text primary key',
    alg: 'text not null',
    public_jwk: 'text not null',
    private_jwk: 'text not null',
    active: 'integer unique',
    not_before: 'text not null',
    not_after: 'text',
    created_at: 'text not null',
  });
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['signing_keys', 'idempotency_keys', 'event_sequence', 'events', 'agents']) {
    await db.schema.dropTable(table).execute();
  }
}
