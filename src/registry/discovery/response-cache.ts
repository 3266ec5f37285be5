import { LRUCache } from 'lru-cache';

/**
 * A least-recently-used cache of what discovery and routing computed from committed data (discovery
 * answers; routing's records, choices, trust bundles and signed answers), on `lru-cache`. An entry is
 * valid while its generation holds — callers pass the registry's event sequence, which any committed
 * change on any instance moves, or a constant — and for at most `maxAgeMs`, which bounds how old the
 * health readings inside an entry can be.
 */
export function createResponseCache<T>(options: { maxEntries: number; maxAgeMs: number; now: () => number }) {
  // lru-cache reads time from `perf.now()`; `ttlResolution: 0` asks it on every check, so an
  // injected clock moves expiry exactly. (It treats a start time of 0 as "no start": clocks begin later.)
  const entries =
    options.maxEntries > 0
      ? new LRUCache<string, { generation: number; value: T }>({ max: options.maxEntries, ttl: options.maxAgeMs, ttlResolution: 0, perf: { now: options.now } })
      : undefined;
  let hits = 0;
  let misses = 0;
  return {
    get(key: string, generation: number): T | undefined {
      const entry = entries?.get(key);
      if (!entry || entry.generation !== generation) {
        if (entry) entries?.delete(key);
        misses += 1;
        return undefined;
      }
      hits += 1;
      return entry.value;
    },
    /** Lookups since start: what the diagnostics page shows as the hit ratio. */
    stats(): { hits: number; misses: number; entries: number; max_entries: number } {
      return { hits, misses, entries: entries?.size ?? 0, max_entries: options.maxEntries };
    },
    set(key: string, generation: number, value: T): void {
      entries?.set(key, { generation, value });
    },
    get size(): number {
      // Entries past their age are dropped when read; the size counts only live ones.
      entries?.purgeStale();
      return entries?.size ?? 0;
    },
  };
}
