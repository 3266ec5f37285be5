import type { Kysely } from 'kysely';

/**
 * Computer-use runs (docs/computer-use.md): one row per run and one per turn. A turn keeps the
 * actions the model asked for, what it said, and the screenshot the turn ended on (base64 PNG, or
 * null when the PHI guard withheld it; its SHA-256 is kept either way, as in the ledger). The ledger
 * sequence numbers of a run's events are kept with it, so the run names its ledger entries even after
 * the events themselves have aged out of the stream.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('computer_use_runs')
    .addColumn('session_id', 'text', (c) => c.primaryKey())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('task', 'text', (c) => c.notNull())
    .addColumn('persona', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('max_turns', 'integer', (c) => c.notNull())
    .addColumn('headless', 'integer', (c) => c.notNull())
    .addColumn('requested_by', 'text')
    /** The registry instance that runs it (its heartbeat lease says whether it still can). */
    .addColumn('instance_id', 'text', (c) => c.notNull())
    .addColumn('turns', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('final_answer', 'text')
    .addColumn('failure_reason', 'text')
    /** JSON array of the sequence numbers of this run's events (its ledger entries). */
    .addColumn('event_seqs', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('ended_at', 'text')
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('computer_use_runs_status').on('computer_use_runs').column('status').execute();

  await db.schema
    .createTable('computer_use_turns')
    .addColumn('session_id', 'text', (c) => c.notNull())
    .addColumn('turn', 'integer', (c) => c.notNull())
    /** JSON array of the actions carried out, each with the SHA-256 of the screenshot after it. */
    .addColumn('actions', 'text', (c) => c.notNull())
    .addColumn('model_text', 'text')
    .addColumn('screenshot_sha256', 'text', (c) => c.notNull())
    .addColumn('screenshot', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('computer_use_turns_pk', ['session_id', 'turn'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('computer_use_turns').execute();
  await db.schema.dropIndex('computer_use_runs_status').execute();
  await db.schema.dropTable('computer_use_runs').execute();
}
