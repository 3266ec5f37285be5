import type { Kysely } from 'kysely';
import type { Database } from '../schema.ts';

/**
 * Takes or renews a named lease: succeeds when nobody holds it, the holder's lease expired, or the
 * caller already holds it. One statement, so two instances cannot both win.
 */
export async function acquireLease(
  db: Kysely<Database>,
  lease: { name: string; holder: string; now: string; expiresAt: string; detail?: string | null },
): Promise<boolean> {
  const detail = lease.detail ?? null;
  await db
    .insertInto('leases')
    .values({ name: lease.name, holder: lease.holder, expires_at: lease.expiresAt, detail })
    .onConflict((oc) =>
      oc
        .column('name')
        .doUpdateSet({ holder: lease.holder, expires_at: lease.expiresAt, detail })
        .where((eb) => eb.or([eb('leases.expires_at', '<=', lease.now), eb('leases.holder', '=', lease.holder)])),
    )
    .execute();
  const row = await db.selectFrom('leases').select('holder').where('name', '=', lease.name).executeTakeFirst();
  return row?.holder === lease.holder;
}

export async function releaseLease(db: Kysely<Database>, name: string, holder: string): Promise<void> {
  await db.deleteFrom('leases').where('name', '=', name).where('holder', '=', holder).execute();
}

/** Unexpired leases whose name starts with `prefix`. */
export async function countLeases(db: Kysely<Database>, prefix: string, now: string): Promise<number> {
  const row = await db
    .selectFrom('leases')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('name', 'like', `${prefix}%`)
    .where('expires_at', '>', now)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Whether the lease `name` is held and unexpired at `now`. */
export async function isLeaseHeld(db: Kysely<Database>, name: string, now: string): Promise<boolean> {
  const row = await db.selectFrom('leases').select('name').where('name', '=', name).where('expires_at', '>', now).executeTakeFirst();
  return row !== undefined;
}

/** Unexpired leases whose name starts with `prefix`, with what each holder says of itself. */
export async function listLeases(db: Kysely<Database>, prefix: string, now: string): Promise<{ name: string; holder: string; expires_at: string; detail: string | null }[]> {
  return db
    .selectFrom('leases')
    .select(['name', 'holder', 'expires_at', 'detail'])
    .where('name', 'like', `${prefix}%`)
    .where('expires_at', '>', now)
    .orderBy('name')
    .execute();
}
