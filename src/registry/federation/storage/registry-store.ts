import { sql, type Kysely, type SqlBool } from 'kysely';
import { entityIdentifier } from '../../../contract/openid-federation.ts';
import type { Database, RegistriesTable } from '../../storage/schema.ts';

type Db = Kysely<Database>;

/**
 * A child registry as stored, with `trust_anchors` and `jwks` parsed and `tier` and `status` narrowed.
 * `entity_id` is the store's own: derived from `api_base_url` when the row is inserted, never changed.
 */
export type RegistryRow = Omit<RegistriesTable, 'tier' | 'trust_anchors' | 'jwks' | 'status' | 'entity_id'> & {
  tier: 'sovereign' | 'organisational';
  trust_anchors: Record<string, unknown>[];
  jwks: { keys: Record<string, unknown>[] };
  status: 'active' | 'revoked';
};

function fromRow({ entity_id: _entityId, ...row }: Database['registries']): RegistryRow {
  return {
    ...row,
    tier: row.tier as RegistryRow['tier'],
    status: row.status as RegistryRow['status'],
    version: Number(row.version),
    entity_iat: Number(row.entity_iat),
    trust_anchors: JSON.parse(row.trust_anchors),
    jwks: JSON.parse(row.jwks),
  };
}

function toRow(row: RegistryRow): Omit<Database['registries'], 'entity_id'> {
  return { ...row, trust_anchors: JSON.stringify(row.trust_anchors), jwks: JSON.stringify(row.jwks) };
}

/** The index that keeps one active child per entity identifier (migration 017b); its predicate, as written there. */
const ACTIVE = sql<SqlBool>`status = 'active'`;

/**
 * Inserts a child; false, writing nothing, when `row` is active and another active child has its entity
 * identifier (the unique index decides, so of two racing inserts exactly one is written).
 */
export async function insertRegistry(tx: Db, row: RegistryRow): Promise<boolean> {
  const entityId = row.api_base_url === null ? null : entityIdentifier(row.api_base_url);
  const result = await tx
    .insertInto('registries')
    .values({ ...toRow(row), entity_id: entityId })
    .onConflict((conflict) => conflict.column('entity_id').where(ACTIVE).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

export async function findRegistry(db: Db, id: string): Promise<RegistryRow | undefined> {
  const row = await db.selectFrom('registries').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

/** The active sovereign registry of a jurisdiction, if any (the root accepts one per country). */
export async function findActiveSovereign(db: Db, jurisdiction: string): Promise<RegistryRow | undefined> {
  const row = await db
    .selectFrom('registries')
    .selectAll()
    .where('jurisdiction', '=', jurisdiction)
    .where('tier', '=', 'sovereign')
    .where('status', '=', 'active')
    .executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

/**
 * The active child whose entity identifier is `entityId` (compared as a string, as OIDF compares them),
 * or undefined. A row without the column (one an older build wrote during a rolling upgrade, or an
 * active duplicate migration 017b found) is matched by its `api_base_url` made an identifier as 017b did;
 * of several, the first in registry-URI order, as the scan of every child before 017b answered. Both
 * parts are ranges of the unique index: rows without the column are its nulls, normally none.
 */
export async function findActiveChildByEntityId(db: Db, entityId: string): Promise<RegistryRow | undefined> {
  // Two seeks of the index, not one OR that both backends answer by reading the whole index.
  const row = await db
    .selectFrom((eb) =>
      eb
        .selectFrom('registries')
        .selectAll()
        .where(ACTIVE)
        .where('entity_id', '=', entityId)
        .unionAll(eb.selectFrom('registries').selectAll().where(ACTIVE).where('entity_id', 'is', null).where(sql`rtrim(api_base_url, '/')`, '=', entityId))
        .as('candidates'),
    )
    .selectAll()
    .orderBy('id', 'asc')
    .limit(1)
    .executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

export type RegistryFilter = { jurisdiction?: string; tier?: string; status?: 'active' | 'revoked' };

export async function listRegistries(db: Db, filter: RegistryFilter, page: { afterId?: string; limit: number }): Promise<RegistryRow[]> {
  let query = db.selectFrom('registries').selectAll();
  if (filter.jurisdiction) query = query.where('jurisdiction', '=', filter.jurisdiction);
  if (filter.tier) query = query.where('tier', '=', filter.tier);
  if (filter.status) query = query.where('status', '=', filter.status);
  if (page.afterId) query = query.where('id', '>', page.afterId);
  return (await query.orderBy('id', 'asc').limit(page.limit).execute()).map(fromRow);
}

/** Writes a changed row when its version is still `expected`; false when another write came first. */
export async function updateRegistry(tx: Db, row: RegistryRow, expected: number): Promise<boolean> {
  const { id, created_at: _created, ...changes } = toRow(row);
  const result = await tx.updateTable('registries').set(changes).where('id', '=', id).where('version', '=', expected).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
