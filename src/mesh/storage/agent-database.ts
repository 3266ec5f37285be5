import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';

/**
 * Opens one of an agent's own SQLite files (its task store, the consent agent's store), creating the
 * directory and the schema: WAL so readers never block the writer, a busy timeout for a second
 * process on the same file, and the durability the store chose (`FULL` when an acknowledged write
 * must survive a power loss, `NORMAL` when losing the last moments of progress is acceptable).
 */
export function openAgentDatabase(path: string, synchronous: 'FULL' | 'NORMAL', schema: string): DatabaseSync {
  mkdirSync(dirname(path), { recursive: true });
  const db = new DatabaseSync(path);
  db.exec('PRAGMA journal_mode = WAL');
  db.exec(`PRAGMA synchronous = ${synchronous}`);
  db.exec('PRAGMA busy_timeout = 5000');
  db.exec(schema);
  return db;
}
