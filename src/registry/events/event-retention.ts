import type { Clock } from '../../core/clock.ts';
import type { Storage } from '../storage/database.ts';
import { pruneEventsBefore } from '../storage/stores/event-store.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

/** How often each instance prunes; deleting a prefix that is already gone is a cheap no-op. */
export const EVENT_PRUNE_INTERVAL_MS = 10 * 60 * 1000;

/**
 * Deletes events older than the retention period (REGISTRY_EVENT_RETENTION_DAYS) and returns how
 * many. Events are the resumable change stream; the permanent record is the transparency ledger,
 * which is never pruned.
 */
export async function pruneExpiredEvents(storage: Storage, clock: Clock, retentionDays: number): Promise<number> {
  const cutoff = new Date(clock.now().getTime() - retentionDays * DAY_MS).toISOString();
  return pruneEventsBefore(storage.db, cutoff);
}

/** Prunes every `intervalMs` until stopped. The timer does not keep the process alive. */
export function schedulePruning(
  storage: Storage,
  clock: Clock,
  retentionDays: number,
  onError: (error: unknown) => void,
  intervalMs: number = EVENT_PRUNE_INTERVAL_MS,
): () => void {
  const timer = setInterval(() => {
    pruneExpiredEvents(storage, clock, retentionDays).catch(onError);
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
