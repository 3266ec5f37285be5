import type { StoredEvent } from '../storage/stores/event-store.ts';

/**
 * The newest committed events, shared by every stream of this instance (docs/performance.md, "Event
 * fan-out"). When a commit wakes a thousand streams at the same position, they would each read the
 * same rows; here the first read goes to the database and the others wait for it, and what it
 * returned is kept, so the streams take their pages from memory, all holding the same event objects
 * (whose SSE frame is then encoded once, sse-format.ts).
 *
 * Correct by the write unit's guarantees: a committed event never changes, and sequence numbers are
 * gap-free in commit order, so a contiguous window of them is exactly what the table holds for that
 * range. A stream behind the window reads the table as before.
 */
export function createRecentEvents(read: (afterSeq: number, limit: number) => Promise<StoredEvent[]>, capacity = 4096) {
  /** Contiguous and ascending: window[i].seq === window[0].seq + i. */
  let window: StoredEvent[] = [];
  const reading = new Map<string, Promise<StoredEvent[]>>();

  function fromWindow(afterSeq: number, limit: number): StoredEvent[] | undefined {
    const first = window[0];
    const last = window.at(-1);
    if (!first || !last || afterSeq < first.seq - 1 || afterSeq >= last.seq) return undefined;
    const start = afterSeq - first.seq + 1;
    return window.slice(start, start + limit);
  }

  function keep(page: StoredEvent[]): void {
    const head = page[0];
    const tail = page.at(-1);
    if (!head || !tail) return;
    const last = window.at(-1);
    if (last && head.seq === last.seq + 1) window.push(...page);
    else if (!last || tail.seq > last.seq) window = isContiguous(page) ? [...page] : [];
    if (window.length > capacity) window = window.slice(window.length - capacity);
  }

  return {
    /** Committed events with `seq > afterSeq`, in order, at most `limit` (as the events table answers). */
    async readAfter(afterSeq: number, limit: number): Promise<StoredEvent[]> {
      const cached = fromWindow(afterSeq, limit);
      if (cached) return cached;
      const key = `${afterSeq}:${limit}`;
      let pending = reading.get(key);
      if (!pending) {
        pending = read(afterSeq, limit).then(
          (page) => {
            reading.delete(key);
            keep(page);
            return page;
          },
          (error: unknown) => {
            reading.delete(key);
            throw error;
          },
        );
        reading.set(key, pending);
      }
      return pending;
    },
  };
}

export type RecentEvents = ReturnType<typeof createRecentEvents>;

function isContiguous(page: readonly StoredEvent[]): boolean {
  return page.every((event, index) => index === 0 || event.seq === (page[index - 1] as StoredEvent).seq + 1);
}
