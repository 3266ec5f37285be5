import type { Storage } from './database.ts';

/**
 * Callbacks registered per storage and dropped with it (a `WeakMap`): what the commit observers
 * (write-unit.ts) and the commit listeners (commit-signal.ts) are kept in.
 */
export function callbacksPerStorage<Args extends unknown[]>() {
  const sets = new WeakMap<Storage, Set<(...args: Args) => void>>();
  return {
    /** Adds `callback` for `storage`; returns the way to remove it. */
    add(storage: Storage, callback: (...args: Args) => void): () => void {
      let set = sets.get(storage);
      if (!set) {
        set = new Set();
        sets.set(storage, set);
      }
      set.add(callback);
      return () => set.delete(callback);
    },
    /** Calls every callback of `storage` with `args`, in the order they were added. */
    call(storage: Storage, ...args: Args): void {
      for (const callback of sets.get(storage) ?? []) callback(...args);
    },
  };
}
