import { loadConfig } from '../../core/config.ts';
import { openStorage, storageOptionsFromConfig } from '../../core/storage/database.ts';
import { migrateToLatest } from '../../core/storage/migrator.ts';
import type { WardCommand } from '../command.ts';

export const migrateCommand: WardCommand = {
  name: 'migrate',
  summary: 'apply pending database migrations and exit',
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
