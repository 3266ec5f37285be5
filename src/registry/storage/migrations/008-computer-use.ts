import type { Kysely } from 'kysely';
import { createTable } from './create-table.ts';

/**
 * Computer-use runs (docs/computer-use.md): one row per run and one per turn. A turn keeps the
 * actions the model asked for, what it said, and the screenshot the turn ended on (base64 PNG, or
 * null when the PHI guard withheld it; its SHA-256 is kept either way, as in the ledger). The ledger
 * sequence numbers of a run's events are kept with it, so the run names its ledger entries even after
 * the events themselves have aged out of the stream.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createTable(db, 'computer_use_runs', {
    session_id: 'text primary key',
    status: 'text not null',
    task: 'text not null',
    persona: 'text not null',
    url: 'text not null',
    max_turns: 'integer not null',
    headless: 'integer not null',
    requested_by: 'text',
    /** The registry instance that runs it (its heartbeat lease says whether it still can). */
    instance_id: 'text not null',
    turns: 'integer not null default 0',
    final_answer: 'text',
    failure_reason: 'text',
    /** JSON array of the sequence numbers of this run's events (its ledger entries). */
    event_seqs: "text not null default '[]'",
    created_at: 'text not null',
    started_at: 'text',
    ended_at: 'text',
    updated_at: 'text not null',
  });
  await db.schema.createIndex('computer_use_runs_status').on('computer_use_runs').column('status').execute();

  await createTable(db, 'computer_use_turns', {
    session_id: 'text not null',
    turn: 'integer not null',
    /** JSON array of the actions carried out, each with the SHA-256 of the screenshot after it. */
    actions: 'text not null',
    model_text: 'text',
    screenshot_sha256: 'text not null',
    screenshot: 'text',
    created_at: 'text not null',
  }, { primaryKey: ['session_id', 'turn'] });
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('computer_use_turns').execute();
  await db.schema.dropIndex('computer_use_runs_status').execute();
  await db.schema.dropTable('computer_use_runs').execute();
}
