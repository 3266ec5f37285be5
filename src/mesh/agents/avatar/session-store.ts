/**
 * In-memory consultation sessions with inactivity expiry. Sessions are deliberately not persisted:
 * they hold what a patient said, and a restart ending them is the safer failure.
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../../core/clock.ts';
import { MeshRpcError } from '../../runtime/mesh-errors.ts';
import type { Consultation } from './consultation.ts';

/** Default inactivity before a session expires: 30 minutes. */
export const DEFAULT_SESSION_IDLE_MS = 30 * 60 * 1000;

/** One consultation session and who owns it. */
export type AvatarSession = {
  readonly id: string;
  /** The caller that started it: only they may continue it. */
  readonly owner: string;
  readonly persona: { readonly name: string; readonly role: string };
  readonly startedAt: number;
  lastActivityAt: number;
  readonly consultation: Consultation;
};

/** The live sessions of one avatar agent, by id. */
export class SessionStore {
  readonly #sessions = new Map<string, AvatarSession>();
  readonly #clock: Clock;
  readonly #idleMs: number;

  constructor(clock: Clock, idleMs = DEFAULT_SESSION_IDLE_MS) {
    if (!(idleMs > 0)) throw new Error('session idle time must be positive');
    this.#clock = clock;
    this.#idleMs = idleMs;
  }

  now(): number {
    return this.#clock.now().getTime();
  }

  create(owner: string, persona: AvatarSession['persona'], consultation: Consultation): AvatarSession {
    this.#sweep();
    const now = this.now();
    const session: AvatarSession = { id: randomUUID(), owner, persona, startedAt: now, lastActivityAt: now, consultation };
    this.#sessions.set(session.id, session);
    return session;
  }

  /**
   * The live session `id` of `owner`, its activity refreshed. Unknown, expired and someone else's
   * sessions all give the same -32013, so a session id cannot be probed.
   */
  touch(id: string, owner: string): AvatarSession {
    const session = this.#sessions.get(id);
    const now = this.now();
    if (session === undefined || session.owner !== owner || now - session.lastActivityAt > this.#idleMs) {
      if (session !== undefined && session.owner === owner) this.#sessions.delete(id);
      throw new MeshRpcError('SESSION_NOT_FOUND', 'Session not found or expired after inactivity', { session_id: id });
    }
    session.lastActivityAt = now;
    return session;
  }

  delete(id: string): void {
    this.#sessions.delete(id);
  }

  /** Drops expired sessions so an idle agent does not keep transcripts in memory. */
  #sweep(): void {
    const now = this.now();
    for (const [id, session] of this.#sessions) if (now - session.lastActivityAt > this.#idleMs) this.#sessions.delete(id);
  }
}
