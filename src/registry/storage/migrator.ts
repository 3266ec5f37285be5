import { sql, type Kysely } from 'kysely';
import type { Storage } from './database.ts';
import type { Database } from './schema.ts';
import { MIGRATIONS, type WardMigration } from './migrations/index.ts';
import { INSTANCE_LEASE_PREFIX } from './stores/idempotency-store.ts';
import { listLeases } from './stores/lease-store.ts';

export type MigrationPhase = 'expand' | 'contract';

/** A live registry instance of a build that does not know a contracting migration. */
export type OlderInstance = { id: string; version: string | null; knows: string | null };

export type MigrationReport = {
  /** What was pending before this run, in order, with each one's phase. */
  pending: { name: string; phase: MigrationPhase }[];
  /** What this run applied. */
  applied: string[];
  /** The contracting migration this run stopped at, and why (nothing after it ran either). */
  refused?: { name: string; reason: 'older_instances' | 'other_instances'; instances: OlderInstance[] };
};

/**
 * When a contracting migration may run: `unless-older` once no live instance runs a build older than
 * it (`ward migrate`), `when-alone` only when no other instance is live at all (an instance starting:
 * a lone one contracts by itself, one joining a cluster leaves it to `ward migrate`).
 */
export type ContractPolicy = 'unless-older' | 'when-alone';

export const phaseOf = (migration: WardMigration | undefined): MigrationPhase => migration?.phase ?? 'expand';

/**
 * Applies the pending migrations in one transaction, in name order, stopping before a contracting
 * one that `contract` does not allow now, and says what it did.
 *
 * Ours rather than Kysely's Migrator: that one decides whether its bookkeeping tables exist by
 * introspecting every schema of the database, which both mistakes another schema's tables for ours
 * and fails outright when another schema is being changed at the same moment. Here the bookkeeping is
 * one table in our own schema, and concurrent starts queue on a lock: PostgreSQL's transaction-scoped
 * advisory lock (per schema), SQLite's write lock (the first statement writes).
 */
export async function migrate(
  storage: Storage,
  options: { migrations?: Record<string, WardMigration>; contract: ContractPolicy; now?: Date },
): Promise<MigrationReport> {
  const migrations = options.migrations ?? MIGRATIONS;
  return storage.db.transaction().execute(async (tx) => {
    if (storage.backend === 'postgres') {
      await sql`select pg_advisory_xact_lock(hashtext('ward-migrations:' || current_schema()))`.execute(tx);
    }
    await sql`create table if not exists ward_migrations (name text primary key, applied_at text not null)`.execute(tx);
    const { rows } = await sql<{ name: string }>`select name from ward_migrations`.execute(tx);
    const applied = new Set(rows.map((row) => row.name));
    const names = Object.keys(migrations).sort();
    const unknown = [...applied].filter((name) => !names.includes(name));
    if (unknown.length > 0) {
      throw new Error(`the database has migrations this build does not know (${unknown.join(', ')}); is it older than the data?`);
    }
    const pending = names.filter((name) => !applied.has(name));
    const report: MigrationReport = { pending: pending.map((name) => ({ name, phase: phaseOf(migrations[name]) })), applied: [] };
    for (const name of pending) {
      const migration = migrations[name] as WardMigration;
      if (phaseOf(migration) === 'contract') {
        const refused = await contractRefusal(tx, name, options.contract, options.now ?? new Date());
        if (refused) {
          report.refused = refused;
          break;
        }
      }
      await migration.up(tx as unknown as Kysely<unknown>);
      await sql`insert into ward_migrations (name, applied_at) values (${name}, ${new Date().toISOString()})`.execute(tx);
      report.applied.push(name);
    }
    return report;
  });
}

/** Applies what may run now (a contracting step only when no other instance is live); the names applied. */
export async function migrateToLatest(storage: Storage, migrations: Record<string, WardMigration> = MIGRATIONS): Promise<string[]> {
  return (await migrate(storage, { migrations, contract: 'when-alone' })).applied;
}

/** Why the contracting migration `name` may not run now, or undefined when it may. */
async function contractRefusal(tx: Kysely<Database>, name: string, policy: ContractPolicy, now: Date): Promise<MigrationReport['refused']> {
  const live = (await listLeases(tx, INSTANCE_LEASE_PREFIX, now.toISOString())).map((lease) => describe(lease.name, lease.detail));
  if (policy === 'when-alone') return live.length > 0 ? { name, reason: 'other_instances', instances: live } : undefined;
  // An instance that says nothing of itself is of a build from before heartbeats did: older.
  const older = live.filter((instance) => instance.knows === null || instance.knows < name);
  return older.length > 0 ? { name, reason: 'older_instances', instances: older } : undefined;
}

function describe(leaseName: string, detail: string | null): OlderInstance {
  const id = leaseName.slice(INSTANCE_LEASE_PREFIX.length);
  try {
    const parsed = JSON.parse(detail ?? 'null') as { version?: unknown; schema?: unknown } | null;
    return { id, version: typeof parsed?.version === 'string' ? parsed.version : null, knows: typeof parsed?.schema === 'string' ? parsed.schema : null };
  } catch {
    return { id, version: null, knows: null };
  }
}

/** Which migrations the database has and which this build expects: what the diagnostics page shows. */
export async function migrationStatus(storage: Storage, migrations: Record<string, WardMigration> = MIGRATIONS) {
  const { rows } = await sql<{ name: string }>`select name from ward_migrations order by name`.execute(storage.db);
  const applied = rows.map((row) => row.name);
  const expected = Object.keys(migrations).sort();
  const pending = expected.filter((name) => !applied.includes(name));
  return {
    applied: applied.length,
    expected: expected.length,
    latest: applied.at(-1) ?? null,
    pending,
    /**
     * Pending migrations this build cannot serve without: every pending one up to the last expanding
     * one. Contracting steps left at the end wait for `ward migrate` and do not stop this build.
     */
    blocking: pending.slice(0, pending.findLastIndex((name) => phaseOf(migrations[name]) === 'expand') + 1),
  };
}
