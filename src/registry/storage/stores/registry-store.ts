import type { Kysely } from 'kysely';
import type { Database, RegistriesTable } from '../schema.ts';

type Db = Kysely<Database>;

/** A child registry as stored, with `trust_anchors` and `jwks` parsed and `tier` and `status` narrowed. */
export type RegistryRow = Omit<RegistriesTable, 'tier' | 'trust_anchors' | 'jwks' | 'status'> & {
  tier: 'sovereign' | 'organisational';
  trust_anchors: Record<string, unknown>[];
  jwks: { keys: Record<string, unknown>[] };
  status: 'active' | 'revoked';
};

function fromRow(row: Database['registries']): RegistryRow {
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

function toRow(row: RegistryRow): Database['registries'] {
  return { ...row, trust_anchors: JSON.stringify(row.trust_anchors), jwks: JSON.stringify(row.jwks) };
}

export async function insertRegistry(tx: Db, row: RegistryRow): Promise<void> {
  await tx.insertInto('registries').values(toRow(row)).execute();
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
