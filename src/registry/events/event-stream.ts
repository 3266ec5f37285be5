import type { Writable } from 'node:stream';
import { formatSseComment, formatSseEvent } from '../../core/http/server-sent-events.ts';
import type { StoredEvent } from '../storage/stores/event-store.ts';
import { droppedFrame, eventFrame, type StreamEndReason } from './sse-format.ts';

/** Tunables of one client's stream; the defaults are what production uses. */
export type EventStreamOptions = {
  /** `: ping` comment interval (contract §6: 15 s); each ping also re-reads the log as a safety net. */
  pingIntervalMs: number;
  /** Events read from the database per query. */
  pageSize: number;
  /** How long a client whose socket is full may take to drain before it is dropped. */
  stallTimeoutMs: number;
  /** The reconnection delay suggested to clients (`retry:`). */
  retryMs: number;
};

export const DEFAULT_EVENT_STREAM_OPTIONS: Readonly<EventStreamOptions> = Object.freeze({
  pingIntervalMs: 15_000,
  pageSize: 100,
  stallTimeoutMs: 30_000,
  retryMs: 2_000,
});

export type EventStreamDeps = {
  /** Where the frames go: the HTTP response in production, any Writable in tests. */
  sink: Writable;
  /** Committed events with `seq > afterSeq`, in order, at most `limit`. */
  readAfter(afterSeq: number, limit: number): Promise<StoredEvent[]>;
  /** Wake-ups after commits (event-hub.ts). */
  subscribe(wake: () => void): () => void;
  /** Deliver the events after this sequence number. */
  startAfter: number;
  /** Only these types; every type when absent. */
  types?: ReadonlySet<string> | undefined;
  /** Whether this client may read an event (event-visibility.ts); every event when absent. */
  visible?: ((event: StoredEvent) => boolean) | undefined;
  options: EventStreamOptions;
  onError?(error: unknown): void;
};

/** How a stream ended, and how far it had got. */
export type StreamOutcome = { reason: StreamEndReason | 'client_closed'; position: number };

export type EventStream = {
  readonly finished: Promise<StreamOutcome>;
  /** Ends the stream from the server side (e.g. shutdown), telling the client why. */
  stop(reason: StreamEndReason): void;
};

/**
 * Delivers committed events to one client, in `seq` order, with no gap and no duplicate.
 *
 * The events table is the only source: the stream keeps a position (the last sequence number it
 * has passed) and reads `seq > position` whenever it is woken, so there is nothing to reconcile
 * between a catch-up phase and a live phase, and no event can be skipped or sent twice. Pages are
 * read unfiltered and checked for contiguity, which catches events pruned under a reader that
 * fell more than the retention period behind; the type filter and the reader's visibility (events
 * about another organisation's keys) are applied in memory.
 *
 * Back-pressure: after each page the stream waits until the socket has drained below its
 * high-water mark before reading more, so a client holds at most one page plus a socket buffer
 * of memory, and a slow client only delays itself. One that does not drain within
 * `stallTimeoutMs` is dropped with `event: stream.dropped` (reason `slow_consumer`); it resumes
 * with Last-Event-ID like after any disconnect.
 */
export function startEventStream(deps: EventStreamDeps): EventStream {
  const { sink, options } = deps;
  let position = deps.startAfter;
  let ended = false;
  let woken = false;
  let resumeWaiter: (() => void) | undefined;
  let finish: (outcome: StreamOutcome) => void = () => undefined;
  const finished = new Promise<StreamOutcome>((resolve) => (finish = resolve));

  const wake = () => {
    woken = true;
    resumeWaiter?.();
  };
  const unsubscribe = deps.subscribe(wake);
  const ping = setInterval(() => {
    if (!ended) sink.write(formatSseComment('ping'));
    wake();
  }, options.pingIntervalMs);
  const onClose = () => close('client_closed');
  sink.once('close', onClose);
  sink.on('error', () => close('client_closed'));

  function close(reason: StreamOutcome['reason']): void {
    if (ended) return;
    ended = true;
    clearInterval(ping);
    unsubscribe();
    sink.off('close', onClose);
    if (reason !== 'client_closed') {
      sink.end(droppedFrame(reason, position));
      // A client that stopped reading never lets `end` finish; do not keep its socket forever.
      const destroyTimer = setTimeout(() => sink.destroy(), Math.min(options.stallTimeoutMs, 5_000));
      destroyTimer.unref();
      sink.once('close', () => clearTimeout(destroyTimer));
    }
    finish({ reason, position });
    resumeWaiter?.();
  }

  async function waitForWake(): Promise<void> {
    if (woken || ended) return;
    await new Promise<void>((resolve) => (resumeWaiter = resolve));
    resumeWaiter = undefined;
  }

  async function waitForDrain(): Promise<boolean> {
    if (sink.writableLength <= sink.writableHighWaterMark) return true;
    return new Promise<boolean>((resolve) => {
      const done = (drained: boolean) => {
        clearTimeout(timer);
        sink.off('drain', onDrain);
        resumeWaiter = undefined;
        resolve(drained);
      };
      const onDrain = () => done(true);
      const timer = setTimeout(() => done(false), options.stallTimeoutMs);
      sink.on('drain', onDrain);
      resumeWaiter = () => {
        if (ended) done(false);
      };
    });
  }

  async function deliver(): Promise<void> {
    sink.write(formatSseEvent({ retry: options.retryMs }));
    sink.write(formatSseComment(`events after seq ${position}`));
    while (!ended) {
      woken = false;
      const page = await deps.readAfter(position, options.pageSize);
      if (ended) return;
      if (page.length === 0) {
        await waitForWake();
        continue;
      }
      if ((page[0] as StoredEvent).seq !== position + 1) return close('cursor_expired');
      for (const event of page) {
        if ((!deps.types || deps.types.has(event.type)) && (!deps.visible || deps.visible(event))) sink.write(eventFrame(event));
        position = event.seq;
      }
      if (!(await waitForDrain())) {
        close('slow_consumer'); // a no-op when the stream ended while waiting
        return;
      }
    }
  }

  deliver().catch((error: unknown) => {
    deps.onError?.(error);
    close('unavailable');
  });
  return { finished, stop: (reason) => close(reason) };
}
