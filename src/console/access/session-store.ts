import type { Session } from 'fastify';

type Callback = (error?: unknown) => void;

/**
 * Where @fastify/session keeps the console's sessions: this process's memory, bounded. The console
 * holds no storage of its own (docs/console.md): a restart signs everyone out, which for an operator
 * console is the safe failure. Entries older than `maxAgeMs` are swept; past `maxEntries` the oldest
 * session nobody is signed in to goes first, so a flood of sign-in pages can neither grow the process
 * without bound nor push operators out.
 */
export class BoundedSessionStore {
  readonly #sessions = new Map<string, { session: Session; storedAt: number }>();
  readonly #maxAgeMs: number;
  readonly #maxEntries: number;
  readonly #sweeper: NodeJS.Timeout;

  constructor(options: { maxAgeMs: number; maxEntries?: number }) {
    this.#maxAgeMs = options.maxAgeMs;
    this.#maxEntries = options.maxEntries ?? 10_000;
    this.#sweeper = setInterval(() => this.sweep(), Math.min(60_000, this.#maxAgeMs)).unref();
  }

  set(sessionId: string, session: Session, callback: Callback): void {
    this.#sessions.delete(sessionId);
    this.#sessions.set(sessionId, { session, storedAt: Date.now() });
    if (this.#sessions.size > this.#maxEntries) this.#evictOne();
    callback();
  }

  /**
   * The oldest session nobody is signed in to (a visitor's sign-in form) goes first, so a flood of
   * anonymous visits cannot sign operators out; only when every session is signed in, the oldest.
   */
  #evictOne(): void {
    for (const [id, entry] of this.#sessions) {
      if (!(entry.session as { credential?: unknown }).credential) {
        this.#sessions.delete(id);
        return;
      }
    }
    const oldest = this.#sessions.keys().next().value;
    if (oldest !== undefined) this.#sessions.delete(oldest);
  }

  get(sessionId: string, callback: (error: unknown, session?: Session | null) => void): void {
    const entry = this.#sessions.get(sessionId);
    if (!entry || Date.now() - entry.storedAt > this.#maxAgeMs) {
      this.#sessions.delete(sessionId);
      callback(null, null);
      return;
    }
    callback(null, entry.session);
  }

  destroy(sessionId: string, callback: Callback): void {
    this.#sessions.delete(sessionId);
    callback();
  }

  get size(): number {
    return this.#sessions.size;
  }

  sweep(): void {
    const now = Date.now();
    for (const [id, entry] of this.#sessions) if (now - entry.storedAt > this.#maxAgeMs) this.#sessions.delete(id);
  }

  close(): void {
    clearInterval(this.#sweeper);
    this.#sessions.clear();
  }
}
