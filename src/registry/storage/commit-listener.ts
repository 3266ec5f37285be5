import pg from 'pg';
import { COMMIT_CHANNEL_EXPRESSION, commitChannelOf } from './commit-signal.ts';
import type { Storage } from './database.ts';

export type CommitListenerOptions = {
  url: string;
  schema?: string | undefined;
  /** Called with the committed sequence number, or `undefined` after a reconnect (anything may have been missed). */
  onCommit(lastSeq: number | undefined): void;
  /** Connection trouble worth a log line; the listener keeps trying. */
  onError(error: unknown): void;
  /** First and longest wait between reconnect attempts. Defaults 100 ms and 5 s. */
  retryMinMs?: number;
  retryMaxMs?: number;
};

export type CommitListener = { close(): Promise<void> };

/**
 * One dedicated PostgreSQL connection per registry instance that LISTENs on the storage's commit
 * channel (commit-signal.ts), so a change committed by any instance wakes this one's stream readers.
 * A pooled connection cannot be used: LISTEN belongs to a session. When the connection drops it is
 * re-opened with backoff and `onCommit(undefined)` tells readers to look, because notifications sent
 * while it was down are lost (until then, the readers' periodic re-read covers the gap).
 *
 * Refuses to start when its channel differs from the one the storage's writers use, i.e. when the
 * configuration names another database or schema than the storage it was given.
 */
export async function listenForCommits(storage: Storage, options: CommitListenerOptions): Promise<CommitListener> {
  const expected = await commitChannelOf(storage);
  const retryMinMs = options.retryMinMs ?? 100;
  const retryMaxMs = options.retryMaxMs ?? 5000;
  let retryMs = retryMinMs;
  let closed = false;
  let client: pg.Client | undefined;
  let timer: NodeJS.Timeout | undefined;

  async function connect(): Promise<void> {
    const next = new pg.Client({
      connectionString: options.url,
      ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
    });
    next.on('notification', (message) => {
      const seq = Number(message.payload);
      options.onCommit(Number.isSafeInteger(seq) ? seq : undefined);
    });
    // Without an 'error' listener a dropped connection would crash the process.
    next.on('error', (error) => {
      options.onError(error);
      lost(next);
    });
    next.on('end', () => lost(next));
    try {
      await next.connect();
      const { rows } = await next.query<{ channel: string }>(`select ${COMMIT_CHANNEL_EXPRESSION} as channel`);
      const channel = rows[0]?.channel;
      if (channel !== expected) {
        throw new Error(`the commit listener's schema is not the storage's (channel ${String(channel)}, expected ${expected})`);
      }
      await next.query(`LISTEN "${channel}"`);
    } catch (error) {
      await quietlyEnd(next);
      throw error;
    }
    if (closed) return quietlyEnd(next);
    client = next;
    retryMs = retryMinMs;
  }

  function lost(dead: pg.Client): void {
    if (client !== dead) return;
    client = undefined;
    void quietlyEnd(dead);
    scheduleReconnect();
  }

  function scheduleReconnect(): void {
    if (closed || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      connect().then(
        () => options.onCommit(undefined),
        (error: unknown) => {
          options.onError(error);
          retryMs = Math.min(retryMs * 2, retryMaxMs);
          scheduleReconnect();
        },
      );
    }, retryMs);
    timer.unref();
  }

  await connect();
  return {
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      const current = client;
      client = undefined;
      if (current) await quietlyEnd(current);
    },
  };
}

async function quietlyEnd(client: pg.Client): Promise<void> {
  client.removeAllListeners('end');
  client.removeAllListeners('notification');
  await client.end().catch(() => undefined);
}
