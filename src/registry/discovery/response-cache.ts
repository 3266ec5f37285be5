/**
 * A small cache of signed discovery responses. An entry is valid while the registry's event sequence
 * (the generation) is unchanged — any committed change on any instance moves it — and for at most
 * `maxAgeMs`, which bounds how old the health readings inside a cached answer can be.
 */
export function createResponseCache<T>(options: { maxEntries: number; maxAgeMs: number; now: () => number }) {
  const entries = new Map<string, { generation: number; storedAt: number; value: T }>();
  return {
    get(key: string, generation: number): T | undefined {
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (entry.generation !== generation || options.now() - entry.storedAt > options.maxAgeMs) {
        entries.delete(key);
        return undefined;
      }
      // Re-insert so the Map's order is least recently used first.
      entries.delete(key);
      entries.set(key, entry);
      return entry.value;
    },
    set(key: string, generation: number, value: T): void {
      if (options.maxEntries === 0) return;
      entries.delete(key);
      entries.set(key, { generation, storedAt: options.now(), value });
      while (entries.size > options.maxEntries) entries.delete(entries.keys().next().value as string);
    },
    get size(): number {
      return entries.size;
    },
  };
}
