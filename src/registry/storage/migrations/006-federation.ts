import type { Kysely } from 'kysely';
import { createTable } from './create-table.ts';

/**
 * Federation (contract §5, docs/federation.md).
 * - `registries`: the child registries this registry has delegated to, with the public keys its
 *   delegation statements name and their status (revocation is a status, never a delete).
 * - `federation_state`: what this registry received from its own parent (the delegation chain and
 *   the parent's keys), so every instance and a restart start from the last good chain.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createTable(db, 'registries', {
    id: 'text primary key',
    name: 'text not null',
    display_name: 'text not null',
    jurisdiction: 'text not null',
    tier: 'text not null',
    api_base_url: 'text',
    trust_anchors: 'text not null',
    jwks: 'text not null',
    status: 'text not null',
    revoked_at: 'text',
    revocation_reason: 'text',
    version: 'integer not null',
    // When the last entity configuration accepted from the child was issued (ms): older ones are replays.
    entity_iat: 'bigint not null default 0',
    created_at: 'text not null',
    updated_at: 'text not null',
  });
  await db.schema.createIndex('registries_jurisdiction_tier').on('registries').columns(['jurisdiction', 'tier']).execute();
  await createTable(db, 'federation_state', {
    name: 'text primary key',
    value: 'text not null',
    updated_at: 'text not null',
  });
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('federation_state').execute();
  await db.schema.dropTable('registries').execute();
}
