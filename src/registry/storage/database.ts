import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { ConfigError } from '../../core/env-schema.ts';
import type { Database } from './schema.ts';
import { adaptNodeSqlite, openSqlite } from './sqlite-adapter.ts';
import { createWalFlusher } from './wal-flush.ts';

export type Backend = 'sqlite' | 'postgres';

/** The open database: the query layer over whichever back-end was configured. */
export type Storage = {
  readonly db: Kysely<Database>;
  readonly backend: Backend;
  /** PostgreSQL only: the connection pool's use now (SQLite has one connection and no pool). */
  poolUse?(): { total: number; idle: number; waiting: number; max: number };
  /**
   * SQLite only: makes every WAL frame written so far durable, off the event loop (wal-flush.ts).
   * Write units commit without syncing and call this before answering; PostgreSQL syncs in COMMIT.
   */
  flushWal?(): Promise<void>;
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
    const db = new Kysely<Database>({
      dialect: new SqliteDialect({ database: adaptNodeSqlite(openSqlite(options.path)) }),
    });
    const wal = createWalFlusher(options.path);
    return {
      db,
      backend: 'sqlite',
      flushWal: () => wal.flush(),
      close: async () => {
        await wal.close();
        await db.destroy();
      },
    };
  }
  await (options.schema ? createSchema(options.url, options.schema) : reach(options.url)).catch((error: unknown) => {
    throw unreachable(options.url, error);
  });
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? 10,
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const max = options.poolSize ?? 10;
  return {
    db,
    backend: 'postgres',
    poolUse: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max }),
    close: () => db.destroy(),
  };
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

/** One connection and nothing else: the database answers at `url` with these credentials. */
async function reach(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.end();
}

/**
 * A database that cannot be reached at start, as a person can act on it (issue 33 item 11): the
 * variable to check and where it points, never its password.
 */
function unreachable(url: string, error: unknown): ConfigError {
  let where = 'the address it names';
  try {
    const parsed = new URL(url);
    // An unescaped '/' in a password makes the parser read part of it as host and path: name nothing then.
    if (parsed.pathname.includes('@')) throw new Error('ambiguous');
    where = `${parsed.hostname}:${parsed.port || '5432'}, database ${parsed.pathname.slice(1) || '(default)'}, user ${decodeURIComponent(parsed.username) || '(default)'}`;
  } catch {
    // An unparseable URL is named as such below.
  }
  const code = (error as { code?: string }).code;
  const reason = (code && PG_REASONS[code]) ?? `${code ?? (error instanceof Error ? error.message.split('\n')[0] : String(error))}: is it running, and are the address and credentials right?`;
  return new ConfigError('DATABASE_URL', `PostgreSQL could not be reached at ${where}: ${reason}`);
}

const PG_REASONS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'nothing listens there (is PostgreSQL running, on that port?)',
  ENOTFOUND: 'no such host',
  ETIMEDOUT: 'the host did not answer',
  '3D000': 'there is no such database (create it, or name another)',
  '28P01': 'the password was refused',
  '28000': 'the user was refused',
};

/** A cheap round trip, for readiness checks. */
export async function pingStorage(storage: Storage): Promise<void> {
  await sql`select 1`.execute(storage.db);
}
