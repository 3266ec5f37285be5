import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { migrationProvider } from './migrations/index.ts';
import type { Database } from './schema.ts';
import { adaptNodeSqlite, openSqlite } from './sqlite-adapter.ts';

export type Backend = 'sqlite' | 'postgres';

/** The open database: the query layer over whichever back-end was configured. */
export type Storage = {
  readonly db: Kysely<Database>;
  readonly backend: Backend;
  /** The PostgreSQL schema the tables live in (`public` unless configured); undefined on SQLite. */
  readonly schema?: string;
  close(): Promise<void>;
};

export type StorageOptions =
  | { backend: 'sqlite'; path: string }
  | { backend: 'postgres'; url: string; schema?: string; poolSize?: number };

/** Chooses the back-end from the configuration: PostgreSQL when a URL is set, else SQLite in the data dir. */
export function storageOptionsFromConfig(config: {
  DATABASE_URL?: string | undefined;
  DATABASE_SCHEMA?: string | undefined;
  DATABASE_POOL_SIZE: number;
  REGISTRY_DATA_DIR: string;
}): StorageOptions {
  if (config.DATABASE_URL) {
    return {
      backend: 'postgres',
      url: config.DATABASE_URL,
      poolSize: config.DATABASE_POOL_SIZE,
      ...(config.DATABASE_SCHEMA ? { schema: config.DATABASE_SCHEMA } : {}),
    };
  }
  mkdirSync(config.REGISTRY_DATA_DIR, { recursive: true });
  return { backend: 'sqlite', path: join(config.REGISTRY_DATA_DIR, 'registry.sqlite') };
}

/** Opens the database (creating the PostgreSQL schema when one is named). Does not migrate. */
export async function openStorage(options: StorageOptions): Promise<Storage> {
  if (options.backend === 'sqlite') {
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: adaptNodeSqlite(openSqlite(options.path)) }) });
    return { db, backend: 'sqlite', close: () => db.destroy() };
  }
  if (options.schema) await createSchema(options.url, options.schema);
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? 10,
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { db, backend: 'postgres', schema: options.schema ?? 'public', close: () => db.destroy() };
}

async function createSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  } finally {
    await client.end();
  }
}

/**
 * Applies every pending migration. Safe to run from several instances at once: Kysely takes a lock
 * (an advisory lock on PostgreSQL) around the run. Returns the names applied now.
 */
export async function migrateToLatest(storage: Storage): Promise<string[]> {
  // Naming the schema matters: left unnamed, Kysely looks for its bookkeeping tables in every
  // schema of the database and can mistake another schema's for ours.
  const migrator = new Migrator({
    db: storage.db,
    provider: migrationProvider,
    ...(storage.schema ? { migrationTableSchema: storage.schema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** A cheap round trip, for readiness checks. */
export async function pingStorage(storage: Storage): Promise<void> {
  await sql`select 1`.execute(storage.db);
}
