import type { Session } from 'fastify';
import { LRUCache } from 'lru-cache';

type Callback = (error?: unknown) => void;

/**
 * Where @fastify/session keeps the console's sessions: this process's memory, bounded. The console
 * holds no storage of its own (docs/console.md): a restart signs everyone out, which for an operator
 * console is the safe failure. Entries older than `maxAgeMs` are swept; past `maxEntries` the oldest
 * session nobody is signed in to goes first, so a flood of sign-in pages can neither grow the process
 * without bound nor push operators out.
 *
 * Two LRU caches, one of visitors' sessions (a sign-in form) and one of signed-in sessions, so that
 * the visitor cache gives up its oldest first; only when it is empty does the signed-in one. Reading
 * a session does not make it newer: "oldest" is the longest since it was stored, as its age is.
 */
export class BoundedSessionStore {
  readonly #visitors: LRUCache<string, Session>;
  readonly #signedIn: LRUCache<string, Session>;
  readonly #maxEntries: number;
  readonly #sweeper: NodeJS.Timeout;

  constructor(options: { maxAgeMs: number; maxEntries?: number }) {
    this.#maxEntries = options.maxEntries ?? 10_000;
    // Wall-clock ages (Date.now), as the sessions' own timestamps are.
    const cache = { max: this.#maxEntries, ttl: options.maxAgeMs, updateAgeOnGet: false, perf: Date };
    this.#visitors = new LRUCache<string, Session>(cache);
    this.#signedIn = new LRUCache<string, Session>(cache);
    this.#sweeper = setInterval(() => this.sweep(), Math.min(60_000, options.maxAgeMs)).unref();
  }

  set(sessionId: string, session: Session, callback: Callback): void {
    this.#visitors.delete(sessionId);
    this.#signedIn.delete(sessionId);
    const signedIn = Boolean((session as { credential?: unknown }).credential);
    (signedIn ? this.#signedIn : this.#visitors).set(sessionId, session);
    if (this.size > this.#maxEntries) (this.#visitors.size > 0 ? this.#visitors : this.#signedIn).pop();
    callback();
  }

  get(sessionId: string, callback: (error: unknown, session?: Session | null) => void): void {
    const session = this.#visitors.peek(sessionId) ?? this.#signedIn.peek(sessionId);
    if (session === undefined) this.destroy(sessionId, () => undefined);
    callback(null, session ?? null);
  }

  destroy(sessionId: string, callback: Callback): void {
    this.#visitors.delete(sessionId);
    this.#signedIn.delete(sessionId);
    callback();
  }

  get size(): number {
    return this.#visitors.size + this.#signedIn.size;
  }

  sweep(): void {
    this.#visitors.purgeStale();
    this.#signedIn.purgeStale();
  }

  close(): void {
    clearInterval(this.#sweeper);
    this.#visitors.clear();
    this.#signedIn.clear();
  }
}
