/**
 * A small least-recently-used cache of what discovery and routing computed from committed data
 * (discovery answers; routing's records, choices, trust bundles and signed answers). An entry is valid
 * while its generation holds — callers pass the registry's event sequence, which any committed change
 * on any instance moves, or a constant — and for at most `maxAgeMs`, which bounds how old the health
 * readings inside an entry can be.
 */
export function createResponseCache<T>(options: { maxEntries: number; maxAgeMs: number; now: () => number }) {
  const entries = new Map<string, { generation: number; storedAt: number; value: T; movedAt: number }>();
  /** Counts every insertion and move to the newest end of `entries`. */
  let moves = 0;
  let hits = 0;
  let misses = 0;
  return {
    get(key: string, generation: number): T | undefined {
      const entry = entries.get(key);
      if (!entry || entry.generation !== generation || options.now() - entry.storedAt > options.maxAgeMs) {
        if (entry) entries.delete(key);
        misses += 1;
        return undefined;
      }
      hits += 1;
      // The Map's order is least recently used first. An entry moved to the newest end fewer than
      // maxEntries / 2 moves ago is far from the oldest, so it stays where it is: a busy key costs one
      // lookup, not a delete and an insert. Eviction is then least recently used to within half the
      // bound: an entry read at least once per maxEntries / 2 moves (insertions, and reads that move
      // an entry) is never evicted.
      if (moves - entry.movedAt >= options.maxEntries / 2) {
        entries.delete(key);
        entry.movedAt = ++moves;
        entries.set(key, entry);
      }
      return entry.value;
    },
    /** Lookups since start: what the diagnostics page shows as the hit ratio. */
    stats(): { hits: number; misses: number; entries: number; max_entries: number } {
      return { hits, misses, entries: entries.size, max_entries: options.maxEntries };
    },
    set(key: string, generation: number, value: T): void {
      if (options.maxEntries === 0) return;
      entries.delete(key);
      entries.set(key, { generation, storedAt: options.now(), value, movedAt: ++moves });
      while (entries.size > options.maxEntries) entries.delete(entries.keys().next().value as string);
    },
    get size(): number {
      return entries.size;
    },
  };
}

