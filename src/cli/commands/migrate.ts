import { loadConfig } from '../../core/config.ts';
import { openStorage, storageOptionsFromConfig } from '../../registry/storage/database.ts';
import { migrateToLatest } from '../../registry/storage/migrator.ts';
import type { WardCommand } from '../command.ts';

const USAGE = `Usage: ward migrate

Applies the pending database migrations to the configured storage (REGISTRY_DATA_DIR, or DATABASE_URL
and DATABASE_SCHEMA) and exits; several instances may run it at once.

Example:
  DATABASE_URL=postgres://root@127.0.0.1:5432/test npx ward migrate`;

export const migrateCommand: WardCommand = {
  name: 'migrate',
  usage: USAGE,
  takesArguments: false,
  async run() {
    const storage = await openStorage(storageOptionsFromConfig(loadConfig()));
    try {
      const applied = await migrateToLatest(storage);
      console.log(applied.length > 0 ? `applied: ${applied.join(', ')}` : 'up to date');
    } finally {
      await storage.close();
    }
    return 0;
  },
};
