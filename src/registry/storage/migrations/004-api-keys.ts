import type { Kysely } from 'kysely';
import { createTable } from './create-table.ts';

/** API keys (stored as keyed hashes only) and registry secrets such as the key-hashing secret. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createTable(db, 'api_keys', {
    key_id: 'text primary key',
    org_id: 'text not null',
    display_name: 'text not null',
    tier: 'text not null',
    scopes: 'text not null',
    key_prefix: 'text not null',
    key_hash: 'text not null unique',
    limits: 'text',
    created_at: 'text not null',
    expires_at: 'text',
    revoked_at: 'text',
    last_used_at: 'text',
  });
  await db.schema.createIndex('api_keys_org').on('api_keys').columns(['org_id', 'created_at']).execute();

  await createTable(db, 'registry_secrets', {
    name: 'text primary key',
    value: 'text not null',
    created_at: 'text not null',
  });
}
