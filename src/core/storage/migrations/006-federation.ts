import type { Kysely } from 'kysely';

/**
 * Federation (contract §5, docs/federation.md).
 * - `registries`: the child registries this registry has delegated to, with the public keys its
 *   delegation statements name and their status (revocation is a status, never a delete).
 * - `federation_state`: what this registry received from its own parent (the delegation chain and
 *   the parent's keys), so every instance and a restart start from the last good chain.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('registries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('display_name', 'text', (c) => c.notNull())
    .addColumn('jurisdiction', 'text', (c) => c.notNull())
    .addColumn('tier', 'text', (c) => c.notNull())
    .addColumn('api_base_url', 'text')
    .addColumn('trust_anchors', 'text', (c) => c.notNull())
    .addColumn('jwks', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .addColumn('revocation_reason', 'text')
    .addColumn('version', 'integer', (c) => c.notNull())
    // When the last entity configuration accepted from the child was issued (ms): older ones are replays.
    .addColumn('entity_iat', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('registries_jurisdiction_tier').on('registries').columns(['jurisdiction', 'tier']).execute();
  await db.schema
    .createTable('federation_state')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('federation_state').execute();
  await db.schema.dropTable('registries').execute();
}
