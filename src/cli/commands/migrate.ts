import { loadConfig } from '../../core/config.ts';
import { openStorage, storageOptionsFromConfig } from '../../registry/storage/database.ts';
import { migrate, migrationStatus, phaseOf, type MigrationReport } from '../../registry/storage/migrator.ts';
import { MIGRATIONS } from '../../registry/storage/migrations/index.ts';
import { UsageError, type WardCommand } from '../command.ts';

const USAGE = `Usage: ward migrate [--pending]

Applies the pending database migrations to the configured storage (REGISTRY_DATA_DIR, or DATABASE_URL
and DATABASE_SCHEMA) and exits; several instances may run it at once. It first lists what is pending,
each migration with its phase: an expanding one (adds what older builds ignore) runs while older
instances serve; a contracting one (removes or tightens what an older build may use) is refused while
a live registry instance (its heartbeat) runs a build that does not know it: roll every instance to
the new build first (docs/operations.md, "Rolling upgrades").

Options:
  --pending   list the pending migrations and change nothing

Exit status: 0 when nothing is left pending, 3 when a contracting step was refused (run it again once
the older instances are gone), 1 on an error.

Example:
  DATABASE_URL=postgres://root@127.0.0.1:5432/test npx ward migrate`;

export const migrateCommand: WardCommand = {
  name: 'migrate',
  usage: USAGE,
  async run(args) {
    const unknown = args.filter((arg) => arg !== '--pending');
    if (unknown.length > 0) throw new UsageError(`unknown argument "${unknown[0]}"`);
    const storage = await openStorage(storageOptionsFromConfig(loadConfig()));
    try {
      if (args.includes('--pending')) return await listPending(storage);
      const report = await migrate(storage, { contract: 'unless-older' });
      printReport(report);
      return report.refused ? 3 : 0;
    } finally {
      await storage.close();
    }
  },
};

async function listPending(storage: Awaited<ReturnType<typeof openStorage>>): Promise<number> {
  // A database never migrated has no bookkeeping table yet: everything is pending.
  const pending = await migrationStatus(storage).then(
    (status) => status.pending,
    () => Object.keys(MIGRATIONS).sort(),
  );
  if (pending.length === 0) console.log('up to date');
  for (const name of pending) console.log(`pending: ${name} (${phaseOf(MIGRATIONS[name])})`);
  return 0;
}

function printReport(report: MigrationReport): void {
  if (report.pending.length === 0) {
    console.log('up to date');
    return;
  }
  for (const { name, phase } of report.pending) console.log(`pending: ${name} (${phase})`);
  if (report.applied.length > 0) console.log(`applied: ${report.applied.join(', ')}`);
  if (report.refused) {
    const { name, instances } = report.refused;
    console.error(
      `ward migrate: refused ${name} (contract): ${instances.length} live instance(s) run an older build: ` +
        instances.map((instance) => `${instance.id} (Ward ${instance.version ?? 'unknown'}, knows migrations up to ${instance.knows ?? 'unknown'})`).join('; ') +
        '. Roll them to the new build (or stop them), then run ward migrate again.',
    );
  }
}
