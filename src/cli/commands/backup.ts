import { copyFileSync, existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../core/config.ts';
import { storageOptionsFromConfig } from '../../registry/storage/database.ts';
import { MIGRATIONS } from '../../registry/storage/migrations/index.ts';
import { backupDatabaseFile, inspectDatabaseFile, type DatabaseFileFigures } from '../../registry/storage/sqlite-backup.ts';
import { UsageError, type WardCommand } from '../command.ts';

const BACKUP_USAGE = `Usage: ward backup <file> [--force]

Copies the embedded (SQLite) database to <file> while the registry may keep running (SQLite's online
backup), then checks the copy: integrity, migrations, and what it holds. The signing keys, API keys,
agents, events and the whole transparency ledger are in it: keep it as secret as the data directory.
  --force  replace <file> if it exists
On PostgreSQL use pg_dump (docs/operations.md, "Backups"); this command says how.
Exit status: 0 backed up and checked, 1 failed, 2 usage.

Example:
  npx ward backup /backups/ward-$(date +%F).sqlite`;

const RESTORE_USAGE = `Usage: ward restore <file> [--force]

Replaces the embedded database in REGISTRY_DATA_DIR with a backup made by \`ward backup\`, after
checking the backup (integrity, migrations). Stop the registry first: a database in use (its -wal
file is present) is refused unless --force.
  --force  restore over a database that looks in use, or whose -wal file was left by a crash
Afterwards \`ward registry\` starts with the backup's signing keys, and \`ward ledger verify\` checks the
restored ledger.
Exit status: 0 restored, 1 failed, 2 usage.

Example:
  npx ward restore /backups/ward-2026-11-25.sqlite`;

function describe(figures: DatabaseFileFigures): string {
  return `${figures.agents} agents, ${figures.ledgerSize} ledger entries, ${figures.keys} signing keys, ${figures.migrations} of ${Object.keys(MIGRATIONS).length} migrations`;
}

/** The one file named on the command line (resolved), and --force. */
function parse(args: string[]): { file: string; force: boolean } {
  const { values, positionals } = parseArgs({ args, options: { force: { type: 'boolean', default: false } }, allowPositionals: true, strict: true });
  if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? 'name the backup file' : 'one file only');
  return { file: resolve(positionals[0] as string), force: values.force };
}

/** The embedded database's path, or undefined (after saying why) on PostgreSQL. */
function sqlitePath(command: string): string | undefined {
  const options = storageOptionsFromConfig(loadConfig());
  if (options.backend === 'sqlite') return options.path;
  console.error(
    `ward ${command}: this registry uses PostgreSQL; use its own tools (docs/operations.md, "Backups"):\n` +
      `  pg_dump --format=custom --no-owner ${options.schema ? `--schema=${options.schema} ` : ''}--file=ward.dump "$DATABASE_URL"\n` +
      `  pg_restore --no-owner --dbname="$DATABASE_URL" ward.dump`,
  );
  return undefined;
}

/**
 * A command on one named file (and --force) and the embedded database, as `ward backup` and `ward
 * restore` are; on PostgreSQL it says what to use instead and exits 2.
 */
function embeddedDatabaseCommand(
  name: 'backup' | 'restore',
  usage: string,
  act: (parsed: { file: string; force: boolean }, database: string) => Promise<number>,
): WardCommand {
  return {
    name,
    usage,
    async run(args) {
      const parsed = parse(args);
      const database = sqlitePath(name);
      return database === undefined ? 2 : act(parsed, database);
    },
  };
}

/** `ward backup <file>`: an online, checked copy of the embedded database. */
export const backupCommand = embeddedDatabaseCommand('backup', BACKUP_USAGE, async (parsed, source) => {
  if (!existsSync(source)) {
    console.error(`ward backup: there is no database at ${source} (REGISTRY_DATA_DIR)`);
    return 1;
  }
  if (existsSync(parsed.file) && !parsed.force) {
    console.error(`ward backup: ${parsed.file} exists; choose another name or pass --force`);
    return 1;
  }
  // Written beside the target and renamed into place: a failed backup never leaves a partial file under its name.
  const partial = join(dirname(parsed.file), `.${Date.now()}.ward-backup.partial`);
  try {
    await backupDatabaseFile(source, partial);
    const figures = inspectDatabaseFile(partial);
    renameSync(partial, parsed.file);
    console.log(`backed up ${source} to ${parsed.file} (${statSync(parsed.file).size} bytes): ${describe(figures)}; integrity ok`);
    return 0;
  } catch (error) {
    rmSync(partial, { force: true });
    console.error(`ward backup: failed: ${(error as Error).message}`);
    return 1;
  }
});

/** `ward restore <file>`: puts a checked backup in place of the embedded database. */
export const restoreCommand = embeddedDatabaseCommand('restore', RESTORE_USAGE, async (parsed, target) => {
  if (!existsSync(parsed.file)) {
    console.error(`ward restore: there is no file at ${parsed.file}`);
    return 1;
  }
  let figures;
  try {
    figures = inspectDatabaseFile(parsed.file);
  } catch (error) {
    console.error(`ward restore: ${parsed.file} cannot be restored: ${(error as Error).message}`);
    return 1;
  }
  const wal = `${target}-wal`;
  if (existsSync(wal) && statSync(wal).size > 0 && !parsed.force) {
    console.error(`ward restore: ${target} looks in use (${wal} is not empty): stop the registry first, or pass --force after a crash`);
    return 1;
  }
  const staged = `${target}.restoring`;
  copyFileSync(parsed.file, staged);
  for (const leftover of [wal, `${target}-shm`]) rmSync(leftover, { force: true });
  renameSync(staged, target);
  console.log(`restored ${parsed.file} to ${target}: ${describe(figures)}`);
  return 0;
});
