/**
 * The registry's public signing keys as the client holds them: pinned by the caller, or read from
 * `/.well-known/jwks.json` and kept for {@link KEYS_MAX_AGE_MS}. An answer signed by a key the held set
 * does not name is the sign of a rotation (the registry signs with a new key at once), so the client
 * reads the set once more for that answer; concurrent answers share one read, and a read that another
 * answer made meanwhile counts as that one. There is no cool-down between reads: only someone able to
 * alter the registry's answers can make one name an unknown key, and each such answer costs the
 * registry one more small GET, never more.
 */
import type { PublishedJwk } from '../core/crypto/key-set.ts';

/** How long a fetched key set is used before it is read again (a key withdrawn at the registry stops verifying within this). */
export const KEYS_MAX_AGE_MS = 10 * 60_000;

/** A key set, and which read produced it (pinned sets are read 0). */
export type HeldKeys = { ok: true; keys: readonly PublishedJwk[]; read: number };
/** Why the keys could not be read: a message, and details for the envelope. */
export type KeysUnavailable = { ok: false; message: string; details: Record<string, unknown> };

export type RegistryKeys = {
  /** True when the caller pinned the keys: nothing is ever fetched. */
  readonly pinned: boolean;
  /** The held set, read first when there is none or it is older than {@link KEYS_MAX_AGE_MS}. */
  current(): Promise<HeldKeys | KeysUnavailable>;
  /** The set read after read `seen` (fetched now, or already by another answer); the pinned set as it is. */
  after(seen: number): Promise<HeldKeys | KeysUnavailable>;
};

/**
 * `load` reads the JWKS (it never throws: unreachable, refused or malformed is a {@link
 * KeysUnavailable}); `pinned` replaces it entirely.
 */
export function createRegistryKeys(options: {
  load: () => Promise<{ ok: true; keys: readonly PublishedJwk[] } | KeysUnavailable>;
  pinned?: { keys: readonly PublishedJwk[] } | undefined;
  now?: () => number;
}): RegistryKeys {
  const now = options.now ?? Date.now;
  if (options.pinned) {
    if (!Array.isArray(options.pinned.keys)) throw new TypeError('trustedJwks must be a JWK Set: {keys: [...]}');
    const held: HeldKeys = { ok: true, keys: options.pinned.keys, read: 0 };
    return { pinned: true, current: async () => held, after: async () => held };
  }
  let held: (HeldKeys & { at: number }) | undefined;
  let reads = 0;
  let reading: Promise<HeldKeys | KeysUnavailable> | undefined;

  function read(): Promise<HeldKeys | KeysUnavailable> {
    reading ??= options
      .load()
      .then((loaded): HeldKeys | KeysUnavailable => {
        if (!loaded.ok) return loaded;
        reads += 1;
        held = { ok: true, keys: loaded.keys, read: reads, at: now() };
        return held;
      })
      .finally(() => {
        reading = undefined;
      });
    return reading;
  }

  return {
    pinned: false,
    current: async () => (held && now() - held.at < KEYS_MAX_AGE_MS ? held : read()),
    after: async (seen) => (held && held.read > seen ? held : read()),
  };
}
