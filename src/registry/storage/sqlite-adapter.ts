import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

/**
 * Kysely's SqliteDialect speaks the better-sqlite3 interface: statements take their parameters as one
 * array and expose `reader`. `node:sqlite` takes them spread and has no `reader`; this adapter is
 * the whole difference. Booleans become 0/1 because node:sqlite binds no booleans.
 */
export function adaptNodeSqlite(database: DatabaseSync): SqliteDatabase {
  // Kysely prepares every query afresh; preparing is a large share of a small query's cost, so
  // statements are kept per SQL text (bounded: texts vary with the number of IN-list values).
  const statements = new Map<string, SqliteStatement>();
  return {
    close: () => database.close(),
    prepare: (sql) => {
      let statement = statements.get(sql);
      if (!statement) {
        statement = adaptStatement(database.prepare(sql));
        if (statements.size >= STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value as string);
        statements.set(sql, statement);
      }
      return statement;
    },
  };
}

const STATEMENT_CACHE_SIZE = 500;

function adaptStatement(statement: StatementSync): SqliteStatement {
  return {
    reader: statement.columns().length > 0,
    all: (parameters) => statement.all(...bind(parameters)),
    run: (parameters) => statement.run(...bind(parameters)),
    iterate: (parameters) => statement.iterate(...bind(parameters)),
  };
}

function bind(parameters: ReadonlyArray<unknown>): SQLInputValue[] {
  return parameters.map((value) => {
    if (typeof value === 'boolean') return value ? 1 : 0;
    if (value === undefined) return null;
    return value as SQLInputValue;
  });
}

/**
 * Opens the embedded database with settings chosen for durability: WAL so readers do not block the
 * writer, `synchronous=FULL` so an acknowledged commit survives a crash, and a busy timeout so a
 * second process (`ward migrate` beside a running server) waits instead of failing.
 */
export function openSqlite(path: string): DatabaseSync {
  const database = new DatabaseSync(path);
  database.exec('PRAGMA journal_mode = WAL');
  database.exec('PRAGMA synchronous = FULL');
  database.exec('PRAGMA busy_timeout = 5000');
  database.exec('PRAGMA foreign_keys = ON');
  return database;
}
