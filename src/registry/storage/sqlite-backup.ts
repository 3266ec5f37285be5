/**
 * The embedded database as a file: an online backup of it, and what a database file holds. `ward
 * backup` and `ward restore` use these; the SQL stays here, with the rest of the storage.
 */
import { backup, DatabaseSync } from 'node:sqlite';
import { MIGRATIONS } from './migrations/index.ts';

/** What a Ward database file holds, as `ward backup` and `ward restore` report it. */
export type DatabaseFileFigures = { agents: number; ledgerSize: number; keys: number; migrations: number };

/** Checks a database file (integrity, migrations this Ward knows) and counts what it holds; throws when it is not a usable Ward database. */
export function inspectDatabaseFile(path: string): DatabaseFileFigures {
  const database = new DatabaseSync(path, { readOnly: true });
  try {
    const integrity = database.prepare('PRAGMA integrity_check').get() as { integrity_check: string } | undefined;
    if (integrity?.integrity_check !== 'ok') throw new Error(`integrity check failed: ${integrity?.integrity_check ?? 'no answer'}`);
    const applied = (database.prepare("select count(*) as n from sqlite_master where type = 'table' and name = 'ward_migrations'").get() as { n: number }).n;
    if (applied === 0) throw new Error('it holds no Ward database (no ward_migrations table)');
    const names = (database.prepare('select name from ward_migrations').all() as { name: string }[]).map((row) => row.name);
    const unknown = names.filter((name) => !(name in MIGRATIONS));
    if (unknown.length > 0) throw new Error(`it was made by a newer Ward (migrations ${unknown.join(', ')})`);
    const count = (table: string) => Number((database.prepare(`select count(*) as n from ${table}`).get() as { n: number | bigint }).n);
    return { agents: count('agents'), ledgerSize: count('ledger_leaves'), keys: count('signing_keys'), migrations: names.length };
  } finally {
    database.close();
  }
}

/** Copies the database at `source` to `target` with SQLite's online backup, while a registry may be writing to it. */
export async function backupDatabaseFile(source: string, target: string): Promise<void> {
  const database = new DatabaseSync(source);
  try {
    database.exec('PRAGMA busy_timeout = 5000');
    await backup(database, target);
  } finally {
    database.close();
  }
}
