import { listenForCommits, type CommitListener } from '../storage/commit-listener.ts';
import { onEventsCommitted } from '../storage/commit-signal.ts';
import type { Storage } from '../storage/database.ts';
import { latestSequence } from '../storage/stores/event-store.ts';

/**
 * One per registry instance: knows how far the event sequence has committed, and wakes this
 * instance's stream readers when events are committed, here (in-process signal after commit) or by
 * any instance on the same PostgreSQL schema (one LISTEN connection). A wake-up says only "look";
 * readers take the events from the events table.
 */
export type EventHub = {
  /** Calls `wake` after every commit of events until the returned function is called. */
  subscribe(wake: () => void): () => void;
  /**
   * The newest committed sequence number this instance knows of, without a query: the discovery
   * cache's generation. A commit here is known before its writer is answered; one elsewhere when its
   * notification arrives (milliseconds); anything else (a notification lost while the LISTEN
   * connection was down, another process writing the SQLite file) within `refreshMs`.
   */
  committedSeq(): number;
  close(): Promise<void>;
};

export type EventHubOptions = {
  /** The connection the LISTEN session opens; required when the storage is PostgreSQL. */
  postgres?: { url: string; schema?: string | undefined } | undefined;
  onError(error: unknown): void;
  /** How often the committed position is re-read from the database regardless. Default 1 s. */
  refreshMs?: number;
};

export async function openEventHub(storage: Storage, options: EventHubOptions): Promise<EventHub> {
  const subscribers = new Set<() => void>();
  let committed = await latestSequence(storage.db);
  let closed = false;
  const advance = (seq: number) => {
    if (seq > committed) committed = seq;
  };
  const refresh = () => {
    if (closed) return;
    latestSequence(storage.db).then(advance, (error: unknown) => {
      if (!closed) options.onError(error);
    });
  };
  const wakeAll = () => {
    for (const wake of subscribers) {
      // On a timer's turn a throw would end the process; one reader's failure is reported instead.
      try {
        wake();
      } catch (error) {
        options.onError(error);
      }
    }
  };
  // The position moves at once (the discovery cache's generation must not serve what a commit
  // changed), but the streams are woken on the next turn of the event loop, once for every commit
  // signalled in this one: a commit's writers are answered in this turn's microtasks, so their
  // answers go out before, not after, a frame is written to every subscriber (bench:fanout, writer
  // latency with 1 000 subscribers).
  let wakePending = false;
  const wakeNextTurn = () => {
    if (wakePending) return;
    wakePending = true;
    setImmediate(() => {
      wakePending = false;
      if (!closed) wakeAll();
    });
  };
  const stopLocal = onEventsCommitted(storage, (lastSeq) => {
    advance(lastSeq);
    wakeNextTurn();
  });
  const timer = setInterval(refresh, options.refreshMs ?? 1000);
  timer.unref();
  let listener: CommitListener | undefined;
  if (storage.backend === 'postgres') {
    if (!options.postgres) throw new Error('a PostgreSQL event hub needs the connection URL to LISTEN on');
    try {
      listener = await listenForCommits(storage, {
        ...options.postgres,
        onCommit: (lastSeq) => {
          // Without a number (after a reconnect) anything may have been missed: read it.
          if (lastSeq === undefined) refresh();
          else advance(lastSeq);
          wakeNextTurn();
        },
        onError: options.onError,
      });
    } catch (error) {
      stopLocal();
      clearInterval(timer);
      throw error;
    }
  }
  return {
    subscribe(wake) {
      subscribers.add(wake);
      return () => subscribers.delete(wake);
    },
    committedSeq: () => committed,
    async close() {
      closed = true;
      clearInterval(timer);
      stopLocal();
      subscribers.clear();
      await listener?.close();
    },
  };
}
