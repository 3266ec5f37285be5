import type { Kysely } from 'kysely';
import type { Database } from '../../storage/schema.ts';

type Db = Kysely<Database>;

/** A named JSON document of this registry's federation state, or undefined. */
export async function readFederationState<T>(db: Db, name: string): Promise<T | undefined> {
  const row = await db.selectFrom('federation_state').select('value').where('name', '=', name).executeTakeFirst();
  return row ? (JSON.parse(row.value) as T) : undefined;
}

/** Replaces a named document (last writer wins: every instance writes what its parent just said). */
export async function writeFederationState(db: Db, name: string, value: unknown, at: string): Promise<void> {
  const json = JSON.stringify(value);
  await db
    .insertInto('federation_state')
    .values({ name, value: json, updated_at: at })
    .onConflict((oc) => oc.column('name').doUpdateSet({ value: json, updated_at: at }))
    .execute();
}
