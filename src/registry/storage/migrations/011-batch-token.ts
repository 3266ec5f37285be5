import type { Kysely } from 'kysely';

/**
 * Each batch of write units stores a random token with the sequence position it commits, and the lock
 * statement reads it back. A process that finds its own last token knows nothing was written since
 * its last batch, so the ledger tree that batch made is still the stored one (write-unit.ts). The
 * position alone could not say so: it can come back to the same number after a restore, with other
 * leaves under it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('event_sequence').addColumn('batch_token', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('event_sequence').dropColumn('batch_token').execute();
}
