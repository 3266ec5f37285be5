import type { Kysely } from 'kysely';
import { PLAINTEXT_KEYS, type KeySealer } from '../../../core/crypto/key-sealer.ts';
import type { Database } from '../../storage/schema.ts';

type Db = Kysely<Database>;

export type SigningKeyRow = {
  kid: string;
  alg: string;
  public_jwk: Record<string, unknown>;
  private_jwk: Record<string, unknown>;
  active: boolean;
  not_before: string;
  not_after: string | null;
  created_at: string;
};

/** A stored row as a key; the private JWK is opened with `sealer` (key-sealer.ts). */
function fromRow(row: Database['signing_keys'], sealer: KeySealer): SigningKeyRow {
  return {
    ...row,
    active: row.active !== null && Number(row.active) === 1,
    public_jwk: JSON.parse(row.public_jwk),
    private_jwk: JSON.parse(sealer.open(row.private_jwk, row.kid)),
  };
}

/** The row to store for a key: the private JWK sealed under the current KEK, if there is one. */
function toRow(key: Omit<SigningKeyRow, 'active'>, sealer: KeySealer) {
  return { ...key, active: 1, public_jwk: JSON.stringify(key.public_jwk), private_jwk: sealer.seal(JSON.stringify(key.private_jwk), key.kid) };
}

export async function findActiveSigningKey(db: Db, sealer: KeySealer = PLAINTEXT_KEYS): Promise<SigningKeyRow | undefined> {
  const row = await db.selectFrom('signing_keys').selectAll().where('active', '=', 1).executeTakeFirst();
  return row ? fromRow(row, sealer) : undefined;
}

/**
 * Seals every stored private key under the current KEK (or opens them all when none is set): after
 * a KEK is first configured, or rotated. Returns how many rows changed. Idempotent; instances doing
 * it at once each write a valid value.
 */
export async function resealSigningKeys(db: Db, sealer: KeySealer): Promise<number> {
  const rows = await db.selectFrom('signing_keys').select(['kid', 'private_jwk']).execute();
  let changed = 0;
  for (const row of rows) {
    if (sealer.isCurrent(row.private_jwk)) continue;
    const plaintext = sealer.open(row.private_jwk, row.kid);
    await db.updateTable('signing_keys').set({ private_jwk: sealer.seal(plaintext, row.kid) }).where('kid', '=', row.kid).execute();
    changed += 1;
  }
  return changed;
}

/** Every key still published (active, or retired but not past its not_after). */
export async function listPublishedSigningKeys(db: Db, now: string, sealer: KeySealer = PLAINTEXT_KEYS): Promise<SigningKeyRow[]> {
  const rows = await db
    .selectFrom('signing_keys')
    .selectAll()
    .where((eb) => eb.or([eb('active', '=', 1), eb('not_after', 'is', null), eb('not_after', '>', now)]))
    .orderBy('created_at', 'asc')
    .execute();
  return rows.map((row) => fromRow(row, sealer));
}

/**
 * Inserts a key as the active one unless another instance did so first (the unique index on
 * `active` decides); returns whether this insert won.
 */
export async function insertActiveSigningKeyIfNone(db: Db, key: Omit<SigningKeyRow, 'active'>, sealer: KeySealer = PLAINTEXT_KEYS): Promise<boolean> {
  const result = await db
    .insertInto('signing_keys')
    .values(toRow(key, sealer))
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/**
 * Rotation, inside a write unit: makes `next` the active key; the previous one stays published until `retireAt`, or its own
 * `not_after` if that comes first (a key never outlives its window). With `expectedKid`, rotates only
 * if that key is still the active one and answers `undefined` otherwise (another instance renewed it).
 */
export async function rotateSigningKey(
  tx: Db,
  next: Omit<SigningKeyRow, 'active'>,
  retireAt: string,
  options: { expectedKid?: string | undefined; sealer: KeySealer },
): Promise<{ previous: SigningKeyRow | undefined; retiredAt: string } | undefined> {
  const { expectedKid, sealer } = options;
  const previous = await findActiveSigningKey(tx, sealer);
  if (expectedKid !== undefined && previous?.kid !== expectedKid) return undefined;
  const retiredAt = previous?.not_after && previous.not_after < retireAt ? previous.not_after : retireAt;
  if (previous) {
    await tx.updateTable('signing_keys').set({ active: null, not_after: retiredAt }).where('kid', '=', previous.kid).execute();
  }
  await tx.insertInto('signing_keys').values(toRow(next, sealer)).execute();
  return { previous, retiredAt };
}

/** Gives a key made without a validity window (before keys had one) its `not_after`. */
export async function setOpenKeyWindow(db: Db, kid: string, notAfter: string): Promise<void> {
  await db.updateTable('signing_keys').set({ not_after: notAfter }).where('kid', '=', kid).where('not_after', 'is', null).execute();
}

/** The keys with these kids, whatever their state (a retired key still proves who held it). */
export async function findSigningKeys(db: Db, kids: readonly string[], sealer: KeySealer = PLAINTEXT_KEYS): Promise<SigningKeyRow[]> {
  if (kids.length === 0) return [];
  const rows = await db.selectFrom('signing_keys').selectAll().where('kid', 'in', [...kids]).execute();
  return rows.map((row) => fromRow(row, sealer));
}
