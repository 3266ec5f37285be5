import type { Kysely } from 'kysely';
import type { Database } from '../../storage/schema.ts';

type Db = Kysely<Database>;

export type ApiKeyRow = {
  key_id: string;
  org_id: string;
  display_name: string;
  tier: string;
  scopes: string[];
  key_prefix: string;
  key_hash: string;
  limits: Record<string, number | null> | null;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
};

function fromRow(row: Database['api_keys']): ApiKeyRow {
  return { ...row, scopes: JSON.parse(row.scopes), limits: row.limits ? JSON.parse(row.limits) : null };
}

export async function insertApiKey(tx: Db, key: ApiKeyRow): Promise<void> {
  await tx
    .insertInto('api_keys')
    .values({ ...key, scopes: JSON.stringify(key.scopes), limits: key.limits ? JSON.stringify(key.limits) : null })
    .execute();
}

export async function findApiKeyByHash(db: Db, keyHash: string): Promise<ApiKeyRow | undefined> {
  const row = await db.selectFrom('api_keys').selectAll().where('key_hash', '=', keyHash).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

export async function findApiKey(db: Db, keyId: string): Promise<ApiKeyRow | undefined> {
  const row = await db.selectFrom('api_keys').selectAll().where('key_id', '=', keyId).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

export async function listApiKeys(db: Db, filter: { orgId?: string }, page: { afterId?: string; limit: number }): Promise<ApiKeyRow[]> {
  let query = db.selectFrom('api_keys').selectAll();
  if (filter.orgId) query = query.where('org_id', '=', filter.orgId);
  if (page.afterId) query = query.where('key_id', '>', page.afterId);
  return (await query.orderBy('key_id', 'asc').limit(page.limit).execute()).map(fromRow);
}

/** Marks a key revoked; false when it was already revoked (or does not exist). */
export async function revokeApiKey(tx: Db, keyId: string, at: string): Promise<boolean> {
  const result = await tx.updateTable('api_keys').set({ revoked_at: at }).where('key_id', '=', keyId).where('revoked_at', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Records use at most once per `everyMs`, so a busy key does not write on every request. */
export async function touchApiKey(db: Db, keyId: string, at: string, notSince: string): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ last_used_at: at })
    .where('key_id', '=', keyId)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', notSince)]))
    .execute();
}

/** A named secret, created once (the first instance to start wins). */
export async function ensureSecret(db: Db, name: string, candidate: string, at: string): Promise<string> {
  await db.insertInto('registry_secrets').values({ name, value: candidate, created_at: at }).onConflict((oc) => oc.column('name').doNothing()).execute();
  const row = await db.selectFrom('registry_secrets').select('value').where('name', '=', name).executeTakeFirstOrThrow();
  return row.value;
}
