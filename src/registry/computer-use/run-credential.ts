/**
 * A run's own console credential (docs/computer-use.md, "The run's credential"): an API key minted
 * for the run when the console asks for sign-in, narrowed to its persona, expiring with its turns and
 * revoked when it ends; and the check that the credential which asked for the run still stands.
 */
import { systemContext, type Scope } from '../../core/call-context.ts';
import type { Clock } from '../../core/clock.ts';
import type { PricingTier } from '../../core/pricing-tiers.ts';
import type { Storage } from '../storage/database.ts';
import { findApiKey } from '../credentials/index.ts';
import type { RunRow } from './storage/computer-use-store.ts';
import type { WriteUnit } from '../storage/write-unit.ts';
import { personaMayAct } from '../../contract/personas.ts';
import type { ApiKeyService } from '../credentials/index.ts';
import { REQUESTER_REVOKED, RunFailure } from './run-records.ts';

/**
 * Who asked for a run: enough to mint the run's own credential (their organisation, their scopes
 * narrowed to the persona, their tier) and to stop when their own credential is revoked. Their
 * credential itself is never kept.
 */
export type RunRequester = { kind: string; credentialId: string; orgId?: string | undefined; scopes: readonly Scope[]; tier?: PricingTier | undefined };

export type RunCredentials = ReturnType<typeof createRunCredentials>;

export function createRunCredentials(deps: {
  storage: Storage;
  clock: Clock;
  apiKeys: ApiKeyService;
  /** How long one model call may take: a run's credential lives for its turns at most. */
  modelTimeoutSeconds: number;
  /** One write of the run, its events kept with it (computer-use-runs.ts). */
  writeRun: <T>(sessionId: string, work: (unit: WriteUnit) => Promise<T>) => Promise<T>;
  log: (error: unknown, message: string) => void;
}) {
  return {
    /**
     * An API key of the requester's organisation and tier, holding `registry:admin` (the console's
     * sign-in needs it) and `registry:read`, and `registry:write` only for a persona that may act;
     * never more than the requester holds. It expires when the run's turns could last no longer. Its
     * creation is one of the run's ledger entries.
     */
    async mint(run: RunRow, requester: RunRequester): Promise<{ keyId: string; rawKey: string }> {
      const wanted: Scope[] = personaMayAct(run.persona) ? ['registry:read', 'registry:write', 'registry:admin'] : ['registry:read', 'registry:admin'];
      const scopes = wanted.filter((scope) => requester.scopes.includes(scope));
      const lifetimeMs = run.max_turns * (deps.modelTimeoutSeconds + 60) * 1000;
      return deps.writeRun(run.session_id, async (unit) => {
        const key = await deps.apiKeys.create(unit, systemContext(deps.clock), {
          org_id: requester.orgId ?? 'computer-use',
          display_name: `computer-use run ${run.session_id} (${run.persona})`,
          tier: requester.tier ?? 'enterprise',
          scopes,
          expires_at: new Date(deps.clock.now().getTime() + lifetimeMs).toISOString(),
        });
        return { keyId: key.key_id, rawKey: key.raw_key };
      });
    },

    /** Revokes the run's key (its revocation is one of the run's ledger entries); a failure is logged, and the key expires. */
    async revoke(sessionId: string, keyId: string): Promise<void> {
      await deps
        .writeRun(sessionId, (unit) => deps.apiKeys.revoke(unit, systemContext(deps.clock), keyId))
        .catch((error: unknown) => deps.log(error, "could not revoke a computer-use run's credential"));
    },

    /** A run stops once the API key that asked for it is revoked or expired (a token's expiry is its own). */
    async requireRequester(requester: RunRequester): Promise<void> {
      if (requester.kind !== 'api_key') return;
      const key = await findApiKey(deps.storage.db, requester.credentialId);
      const at = deps.clock.now().toISOString();
      if (!key || key.revoked_at !== null || (key.expires_at !== null && key.expires_at <= at)) throw new RunFailure(REQUESTER_REVOKED);
    },
  };
}
