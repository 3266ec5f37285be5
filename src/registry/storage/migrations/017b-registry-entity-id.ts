import { sql, type Kysely } from 'kysely';

/**
 * A child registry's OpenID Federation entity identifier (its `api_base_url` without a trailing
 * slash, docs/federation.md "Entity identifier") gets a column of its own, unique among the active
 * children: two active children at one address would make the fetch endpoint answer about whichever
 * comes first, so registration refuses the second (REGISTRY_CONFLICT), and the index makes that hold
 * even for writes that race. The same index serves the fetch endpoint's lookup by `sub`.
 *
 * The backfill gives every row with an address its identifier, except an active child whose address
 * an active child with a smaller registry URI already has: that one keeps NULL, so existing duplicates
 * do not fail the migration, and the first in URI order (the one the fetch endpoint answered about)
 * keeps the address. The store's lookup still finds a row without the column by its `api_base_url`
 * (these duplicates, and what an older build writes during a rolling upgrade), in URI order as
 * before. Revoked rows keep theirs: the index covers active rows only, so an address is free again
 * once its child is revoked.
 *
 * An expanding step: an older build ignores the column and is never refused by the index (its rows
 * have no identifier), so the roll goes on (decisions.md 94).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('registries').addColumn('entity_id', 'text').execute();
  // rtrim(x, '/') is entityIdentifier() of src/contract/openid-federation.ts, on both backends.
  await sql`update registries set entity_id = rtrim(api_base_url, '/')
            where api_base_url is not null
              and (status <> 'active' or not exists (
                select 1 from registries earlier
                where earlier.status = 'active' and earlier.api_base_url is not null
                  and rtrim(earlier.api_base_url, '/') = rtrim(registries.api_base_url, '/') and earlier.id < registries.id))`.execute(db);
  await sql`create unique index registries_active_entity_id on registries (entity_id) where status = 'active'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index registries_active_entity_id`.execute(db);
  await db.schema.alterTable('registries').dropColumn('entity_id').execute();
}
