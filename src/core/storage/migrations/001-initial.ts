import type { Kysely } from 'kysely';

/**
 * The registry's first tables: agents, the event log with its gap-free counter, idempotency records
 * and the registry's signing keys. Types are the common subset of SQLite and PostgreSQL.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('agents')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('agent_uri', 'text', (c) => c.notNull().unique())
    .addColumn('jurisdiction', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('display_name', 'text', (c) => c.notNull())
    .addColumn('org_id', 'text')
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('trust_state', 'text', (c) => c.notNull())
    .addColumn('trust_level', 'integer', (c) => c.notNull())
    .addColumn('record', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // List filters page by id (ULIDs sort by creation time) within jurisdiction and status.
  await db.schema.createIndex('agents_jurisdiction_status_id').on('agents').columns(['jurisdiction', 'status', 'id']).execute();
  await db.schema.createIndex('agents_status_id').on('agents').columns(['status', 'id']).execute();
  // The AGENT_CONFLICT check: one non-revoked agent per organisation and display name.
  await db.schema.createIndex('agents_org_name').on('agents').columns(['org_id', 'display_name']).execute();

  await db.schema
    .createTable('events')
    .addColumn('seq', 'bigint', (c) => c.primaryKey())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('occurred_at', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('events_occurred_at').on('events').column('occurred_at').execute();

  // One row whose update both numbers an event and serialises writers, so sequence numbers are
  // gap-free in commit order (a reader never sees seq n+1 before n).
  await db.schema
    .createTable('event_sequence')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('last_seq', 'bigint', (c) => c.notNull())
    .execute();
  await db.insertInto('event_sequence' as never).values({ id: 1, last_seq: 0 } as never).execute();

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('scope_key', 'text', (c) => c.primaryKey())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('response_headers', 'text')
    .addColumn('response_body', 'text')
    .addColumn('locked_until', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('idempotency_keys_expires_at').on('idempotency_keys').column('expires_at').execute();

  // `active` is 1 for the current signing key and NULL otherwise; the unique index allows one 1.
  await db.schema
    .createTable('signing_keys')
    .addColumn('kid', 'text', (c) => c.primaryKey())
    .addColumn('alg', 'text', (c) => c.notNull())
    .addColumn('public_jwk', 'text', (c) => c.notNull())
    .addColumn('private_jwk', 'text', (c) => c.notNull())
    .addColumn('active', 'integer', (c) => c.unique())
    .addColumn('not_before', 'text', (c) => c.notNull())
    .addColumn('not_after', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['signing_keys', 'idempotency_keys', 'event_sequence', 'events', 'agents']) {
    await db.schema.dropTable(table).execute();
  }
}
