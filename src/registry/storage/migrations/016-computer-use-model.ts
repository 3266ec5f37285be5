import type { Kysely } from 'kysely';

/**
 * Each computer-use run keeps the model name it asked (COMPUTER_USE_MODEL when it was requested), so
 * its record says which model drove it, and a run of Ward's demonstration model is labelled as one
 * (docs/computer-use.md). Runs stored before keep null: their model was not recorded.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('computer_use_runs').addColumn('model', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('computer_use_runs').dropColumn('model').execute();
}
