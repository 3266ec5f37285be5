import type { Migration, MigrationProvider } from 'kysely';
import * as initial from './001-initial.ts';

/** Every migration in order; names never change once released. */
const MIGRATIONS: Record<string, Migration> = {
  '001-initial': initial,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => MIGRATIONS,
};
