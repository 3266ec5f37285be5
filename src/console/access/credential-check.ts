/**
 * Whether the registry still accepts a session's credential (docs/console.md, "Access"; issue 48).
 * A session must end once the registry refuses its credential (a key revoked, a token expired), not
 * only on the pages that happen to call the registry with it: the console asks the registry (`GET
 * /v1/caller`) before every request that acts (a form, a tool call, a task answer, the task relay),
 * and for reads keeps the registry's verdict per session for {@link READ_VERDICT_MAX_AGE_MS} at most.
 * A refusal is kept until the session ends, so every request of the session, and every stream it holds
 * open (checked as often), learns it.
 */
import { LRUCache } from 'lru-cache';
import type { RegistryAnswer } from '../../client/registry-answer.ts';
import type { RegistryClient } from '../../client/registry-client.ts';
import type { Clock } from '../../core/clock.ts';

/** How old the registry's verdict on a credential may be for a read, and how often open streams ask again. */
export const READ_VERDICT_MAX_AGE_MS = 5_000;

const ADMIN_SCOPE = 'registry:admin';

/**
 * `accepted`: the registry knows the credential and it still holds `registry:admin`; `refused`: the
 * registry refused it (401), or it no longer names the same credential or holds the scope;
 * `unconfirmed`: the registry could not say (unreachable, 5xx, rate-limited), with its answer.
 */
export type CredentialVerdict =
  | { kind: 'accepted' }
  | { kind: 'refused' }
  | { kind: 'unconfirmed'; answer: Extract<RegistryAnswer, { ok: false }> };

type Kept = { at: number; refused: boolean };

export type CredentialChecks = ReturnType<typeof createCredentialChecks>;

export function createCredentialChecks(deps: { registry: RegistryClient; clock: Clock }) {
  // By session id: a new sign-in is a new id, so a verdict never outlives the credential it is about.
  const verdicts = new LRUCache<string, Kept>({ max: 10_000 });
  const asking = new Map<string, Promise<CredentialVerdict>>();

  async function ask(sessionId: string, credential: string, credentialId: string | undefined): Promise<CredentialVerdict> {
    const answer = await deps.registry.as(credential).caller();
    const now = deps.clock.now().getTime();
    if (!answer.ok) {
      if (answer.status !== 401) return { kind: 'unconfirmed', answer };
      verdicts.set(sessionId, { at: now, refused: true });
      return { kind: 'refused' };
    }
    const refused = !answer.body.scopes.includes(ADMIN_SCOPE) || (credentialId !== undefined && answer.body.credential_id !== credentialId);
    verdicts.set(sessionId, { at: now, refused });
    return refused ? { kind: 'refused' } : { kind: 'accepted' };
  }

  return {
    /** Records a verdict the caller just had from the registry (signing in asks it already). */
    accepted(sessionId: string): void {
      verdicts.set(sessionId, { at: deps.clock.now().getTime(), refused: false });
    },

    /**
     * The registry's verdict on the session's credential, asked now unless one at most `maxAgeMs` old
     * is kept (0: always ask, alone). A refusal is final. Reads of a session asking at once share one
     * question.
     */
    async verdict(session: { id: string; credential: string; credentialId: string | undefined }, maxAgeMs: number): Promise<CredentialVerdict> {
      const kept = verdicts.get(session.id);
      if (kept?.refused) return { kind: 'refused' };
      if (kept && maxAgeMs > 0 && deps.clock.now().getTime() - kept.at <= maxAgeMs) return { kind: 'accepted' };
      // An action asks for itself: a question already on its way may have left before the revocation.
      if (maxAgeMs === 0) return ask(session.id, session.credential, session.credentialId);
      const pending = asking.get(session.id);
      if (pending) return pending;
      const question = ask(session.id, session.credential, session.credentialId).finally(() => asking.delete(session.id));
      asking.set(session.id, question);
      return question;
    },
  };
}
