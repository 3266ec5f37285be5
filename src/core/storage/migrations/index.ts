import type { Migration } from 'kysely';
import * as initial from './001-initial.ts';

/** Every migration, applied in name order; names never change once released. */
export const MIGRATIONS: Record<string, Migration> = {
  '001-initial': initial,
};
