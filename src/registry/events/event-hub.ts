import { listenForCommits, type CommitListener } from '../../core/storage/commit-listener.ts';
import { onEventsCommitted } from '../../core/storage/commit-signal.ts';
import type { Storage } from '../../core/storage/database.ts';

/**
 * One per registry instance: wakes this instance's stream readers when events are committed,
 * here (in-process signal after commit) or by any instance on the same PostgreSQL schema (one
 * LISTEN connection). A wake-up says only "look"; readers take the events from the events table.
 */
export type EventHub = {
  /** Calls `wake` after every commit of events until the returned function is called. */
  subscribe(wake: () => void): () => void;
  close(): Promise<void>;
};

export type EventHubOptions = {
  /** The connection the LISTEN session opens; required when the storage is PostgreSQL. */
  postgres?: { url: string; schema?: string | undefined } | undefined;
  onError(error: unknown): void;
};

export async function openEventHub(storage: Storage, options: EventHubOptions): Promise<EventHub> {
  const subscribers = new Set<() => void>();
  const wakeAll = () => {
    for (const wake of subscribers) wake();
  };
  const stopLocal = onEventsCommitted(storage, wakeAll);
  let listener: CommitListener | undefined;
  if (storage.backend === 'postgres') {
    if (!options.postgres) throw new Error('a PostgreSQL event hub needs the connection URL to LISTEN on');
    try {
      listener = await listenForCommits(storage, { ...options.postgres, onCommit: wakeAll, onError: options.onError });
    } catch (error) {
      stopLocal();
      throw error;
    }
  }
  return {
    subscribe(wake) {
      subscribers.add(wake);
      return () => subscribers.delete(wake);
    },
    async close() {
      stopLocal();
      subscribers.clear();
      await listener?.close();
    },
  };
}
