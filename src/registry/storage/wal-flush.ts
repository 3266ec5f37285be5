/**
 * Making committed SQLite transactions durable without blocking the event loop.
 *
 * With `synchronous=FULL`, SQLite calls `fdatasync` on the WAL inside COMMIT: node:sqlite is
 * synchronous, so for the 1–2 ms of every fsync the registry's one thread did nothing else (a fifth
 * of its time under registration load). Write units instead commit with `synchronous=NORMAL`, which
 * writes the WAL frames without syncing them, and then call {@link WalFlusher.flush}: the same
 * `fdatasync` of the same file, run on libuv's thread pool, while the event loop goes on parsing,
 * validating and scanning the next requests. Callers are answered only after it returns, so an
 * acknowledged write is on the disk exactly as under FULL. The write unit holds the database
 * connection until the flush returns, so nothing in this process reads a commit before it is durable
 * (write-unit.ts). NORMAL is always consistent in WAL mode (sqlite.org/pragma.html#pragma_synchronous):
 * a crash before the flush loses the unanswered transaction, never the database.
 *
 * Flushes coalesce: callers that arrive while one runs share the next, which covers every commit
 * written before it starts.
 */
import { open, type FileHandle } from 'node:fs/promises';

export type WalFlusher = {
  /** Resolves once every WAL frame written before the call is on stable storage. */
  flush(): Promise<void>;
  close(): Promise<void>;
};

export function createWalFlusher(databasePath: string): WalFlusher {
  let handle: Promise<FileHandle> | undefined;
  let running: Promise<void> | undefined;
  let next: Promise<void> | undefined;

  async function syncOnce(): Promise<void> {
    // Opened on first use: the WAL file exists once the first write transaction has begun.
    handle ??= open(`${databasePath}-wal`, 'r');
    await (await handle).datasync();
  }

  function flush(): Promise<void> {
    if (!running) {
      running = syncOnce().finally(() => {
        running = undefined;
      });
      return running;
    }
    // A flush is under way and may have started before the caller's frames were written: the
    // caller waits for the one after it, shared with everyone else who arrives meanwhile.
    next ??= running
      .catch(() => undefined)
      .then(() => {
        next = undefined;
        return flush();
      });
    return next;
  }

  return {
    flush,
    async close() {
      await running?.catch(() => undefined);
      await next?.catch(() => undefined);
      if (handle) await (await handle).close();
      handle = undefined;
    },
  };
}
