/**
 * A registry's link to its parent (REGISTRY_PARENT_URL; docs/federation.md). It fetches a fresh
 * delegation grant well before the current statement expires, presenting a self-signed entity
 * configuration so a key rotation here reaches the parent's statements, and keeps the last good
 * grant in storage so every instance and a restart start from it. Without a parent the registry is
 * its own trust anchor: its chain is itself alone.
 */
import { decodeJwt, type JWK } from 'jose';
import type { Clock } from '../../core/clock.ts';
import type { RegistrySigner } from '../trust/registry-signer.ts';
import type { Storage } from '../storage/database.ts';
import { readFederationState, writeFederationState } from '../storage/stores/federation-state-store.ts';
import { readBodyCapped } from '../../core/http/read-capped.ts';
import { ENTITY_CONFIGURATION_TYP, type DelegationGrant } from './child-registries.ts';
import { verifiedPayload, type PublishedJwk } from '../../core/crypto/key-set.ts';
import { DELEGATION_TYP, STATUS_TYP } from '../../contract/delegation-statement.ts';

const STATE_NAME = 'delegation';
const ENTITY_CONFIGURATION_LIFETIME_S = 300;
const RETRY_MIN_MS = 1000;
const RETRY_MAX_MS = 30_000;
const STATE_REREAD_MS = 5_000;
const MAX_GRANT_BYTES = 256 * 1024;

function parseJson(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** What this registry last received from its parent. */
export type ParentState = DelegationGrant & { parent_url: string; parent_id: string; fetched_at: string; revoked?: { reason: string | null } };

export type ParentLink = {
  /** The chain from the root down to this registry and the statements proving it. */
  trustChain(): { delegationChain: string[]; statements: string[] };
  /** Set once the parent refused this registry as revoked: its advice and bundles no longer stand for the federation. */
  revoked(): { reason: string | null } | undefined;
  /** The parent's registry URI and public keys, once a grant arrived (federation tokens are checked with them). */
  parent(): { id: string; jwks: { keys: JWK[] } } | undefined;
  /** Fetches a grant now (after a key rotation; tests). Resolves false when the parent did not grant one. */
  refresh(): Promise<boolean>;
  start(): void;
  stop(): void;
};

export async function createParentLink(deps: {
  parentUrl: string | undefined;
  registryId: string;
  storage: Storage;
  signer: RegistrySigner;
  clock: Clock;
  timeoutMs: number;
  log: (message: string, error?: unknown) => void;
  fetch?: typeof fetch;
}): Promise<ParentLink> {
  const { registryId, parentUrl } = deps;
  const fetchImpl = deps.fetch ?? fetch;
  let state = parentUrl ? await readStoredState() : undefined;
  let stateReadAt = Date.now();
  let timer: NodeJS.Timeout | undefined;
  let failures = 0;
  let stopped = true;
  let nudgedAt = 0;

  async function readStoredState(): Promise<ParentState | undefined> {
    const stored = await readFederationState<ParentState>(deps.storage.db, STATE_NAME);
    // A stored grant from another parent (the configuration changed) is not this registry's chain.
    return stored && stored.parent_url === parentUrl ? stored : undefined;
  }

  /**
   * The kids the parent holds for this registry: those its last statement named. Decoded once per
   * statement: trustChain() asks on every routing answer and bundle.
   */
  let namedKids: { statement: string | undefined; kids: string[] } = { statement: undefined, kids: [] };
  function kidsKnownToParent(): string[] {
    const last = state?.statements.at(-1);
    if (last !== namedKids.statement) {
      const keys = last ? ((decodeJwt(last).jwks as { keys?: Array<{ kid?: unknown }> } | undefined)?.keys ?? []) : [];
      namedKids = { statement: last, kids: keys.map((key) => key.kid).filter((kid): kid is string => typeof kid === 'string') };
    }
    return namedKids.kids;
  }

  /**
   * This registry's published keys, signed by its current key and by each key the parent holds for
   * it (after a rotation the parent knows only the old one). A few signatures, not one per key ever
   * published, so the header stays small.
   */
  async function entityConfiguration(): Promise<string> {
    await deps.signer.refreshIfStale();
    const nowMs = deps.clock.now().getTime();
    const iat = Math.floor(nowMs / 1000);
    // iat_ms orders configurations finer than iat: the parent accepts only ones newer than the last.
    const claims = { iss: registryId, sub: registryId, iat, iat_ms: nowMs, exp: iat + ENTITY_CONFIGURATION_LIFETIME_S, jwks: deps.signer.jwks() };
    return (await deps.signer.signWithKeys(claims, ENTITY_CONFIGURATION_TYP, kidsKnownToParent())).join(' ');
  }

  // One fetch at a time: two at once would present entity configurations of the same second, and the
  // parent accepts only the first.
  let inFlight: Promise<boolean> | undefined;
  function refresh(): Promise<boolean> {
    inFlight ??= fetchGrant().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  }

  async function fetchGrant(): Promise<boolean> {
    if (!parentUrl) return false;
    const base = parentUrl.replace(/\/+$/, '');
    const response = await fetchImpl(`${base}/v1/federation/fetch?sub=${encodeURIComponent(registryId)}`, {
      headers: { accept: 'application/json', 'ward-entity-configuration': await entityConfiguration() },
      signal: AbortSignal.timeout(deps.timeoutMs),
      redirect: 'error',
    });
    const body = parseJson(await readBodyCapped(response, MAX_GRANT_BYTES));
    if (response.status === 403 && (body?.error as { code?: string } | undefined)?.code === 'REGISTRY_REVOKED') {
      await confirmRevocation(base);
      return false;
    }
    if (!response.ok || !body) throw new Error(`the parent answered HTTP ${response.status}`);
    const grant = await checkedGrant(body);
    state = { ...grant, parent_url: parentUrl, parent_id: grant.delegation_chain.at(-2) as string, fetched_at: deps.clock.now().toISOString() };
    stateReadAt = Date.now();
    await writeFederationState(deps.storage.db, STATE_NAME, state, state.fetched_at);
    return true;
  }

  /**
   * An unsigned 403 proves nothing: the revocation counts only once the parent's status token,
   * checked with the parent keys this registry already holds, says so. Then the chain goes at once.
   */
  async function confirmRevocation(base: string): Promise<void> {
    if (!state) throw new Error('the parent refused a grant as revoked; without the keys of an earlier grant that cannot be confirmed');
    const response = await fetchImpl(`${base}/v1/federation/status?sub=${encodeURIComponent(registryId)}`, {
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(deps.timeoutMs),
      redirect: 'error',
    });
    const body = parseJson(await readBodyCapped(response, MAX_GRANT_BYTES));
    const token = body?.status_token;
    if (typeof token !== 'string') throw new Error('the parent refused a grant but gave no status token');
    const now = deps.clock.now();
    const claims = (await verifiedPayload(token, STATUS_TYP, state.issuer_jwks.keys as PublishedJwk[], now)) as { iss?: unknown; sub?: unknown; status?: unknown; exp?: unknown } | undefined;
    const fresh = typeof claims?.exp === 'number' && claims.exp * 1000 > now.getTime();
    if (claims?.iss !== state.parent_id || claims.sub !== registryId || claims.status !== 'revoked' || !fresh) {
      throw new Error('the parent refused a grant, but its status token does not confirm a revocation');
    }
    // A later fetched_at makes the other instances adopt it when they re-read the stored grant.
    const at = deps.clock.now().toISOString();
    state = { ...state, statements: [], revoked: { reason: typeof body?.reason === 'string' ? body.reason : null }, fetched_at: at };
    await writeFederationState(deps.storage.db, STATE_NAME, state, at);
  }

  /**
   * A grant is kept only if it is about this registry, names its signing key, is a fresh delegation
   * statement by the registry before it in the chain, and comes with keys this registry can tie to
   * that parent: under a sovereign, the keys its grandparent's statement names.
   */
  async function checkedGrant(body: Record<string, unknown>): Promise<DelegationGrant> {
    const grant = body as unknown as DelegationGrant;
    const { delegation_chain: chain, statements } = grant;
    if (!Array.isArray(chain) || !Array.isArray(statements) || chain.at(-1) !== registryId || statements.length !== chain.length - 1 || chain.length < 2) {
      throw new Error('the parent answered a grant for another registry or a broken chain');
    }
    const parentId = chain.at(-2) as string;
    if (state && !state.revoked && state.parent_id !== parentId) throw new Error(`the grant is from ${parentId}, not from ${state.parent_id}`);
    const offered = grant.issuer_jwks?.keys;
    if (!Array.isArray(offered) || offered.length === 0) throw new Error('the grant carries no parent keys');
    const above = statements.at(-2);
    let issuerKeys = offered;
    if (above !== undefined) {
      // Only the keys the grandparent delegated to the parent count (a key the parent has just
      // rotated in counts once the grandparent's statement names it).
      const named = ((decodeJwt(above).jwks as { keys?: Array<{ kid?: unknown }> } | undefined)?.keys ?? []).map((key) => key.kid);
      issuerKeys = offered.filter((key) => named.includes(key.kid));
      if (issuerKeys.length === 0) throw new Error("none of the parent's keys is one its own parent delegated to it");
    }
    // Under a root nothing above vouches for its keys: they are as good as the configured parent URL,
    // which production requires to be https (a root may retire a key at once, so no continuity is asked).
    const statement = statements.at(-1) as string;
    const now = deps.clock.now();
    const claims = (await verifiedPayload(statement, DELEGATION_TYP, issuerKeys as PublishedJwk[], now)) as
      | { iss?: string; sub?: string; exp?: number; jwks?: { keys?: Array<{ kid?: string }> } }
      | undefined;
    if (typeof claims !== 'object' || claims === null) throw new Error("the grant's statement is not a delegation statement verified by the parent's keys");
    if (claims.iss !== parentId || claims.sub !== registryId) throw new Error('the statement names another issuer or subject');
    if (typeof claims.exp !== 'number' || claims.exp * 1000 <= now.getTime()) throw new Error('the statement has expired');
    if (!claims.jwks?.keys?.some((key) => key.kid === deps.signer.kid)) throw new Error("the statement does not name this registry's signing key yet");
    return { ...grant, issuer_jwks: { keys: issuerKeys } };
  }

  /**
   * Other instances fetch and rotate too: re-read the stored grant every few seconds, and fetch at
   * once when the chain does not name the key this instance now signs with.
   */
  function keepCurrent(): void {
    const now = Date.now();
    if (now - stateReadAt > STATE_REREAD_MS) {
      stateReadAt = now;
      readStoredState().then(
        (stored) => {
          if (stored && (!state || stored.fetched_at > state.fetched_at)) state = stored;
        },
        (error: unknown) => deps.log('reading the stored delegation failed', error),
      );
    }
    if (!stopped && state && !state.revoked && now - nudgedAt > STATE_REREAD_MS && !kidsKnownToParent().includes(deps.signer.kid)) {
      nudgedAt = now;
      refresh().catch((error: unknown) => deps.log('fetching the delegation after a key change failed', error));
    }
  }

  function schedule(): void {
    if (stopped) return;
    clearTimeout(timer);
    let delay: number;
    if (failures > 0) delay = Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** (failures - 1));
    else if (!state || state.revoked) delay = state?.revoked ? RETRY_MAX_MS : RETRY_MIN_MS;
    else {
      // Renew once a third of the statement's life has passed, so two failed renewals still leave time.
      const { iat, exp } = decodeJwt(state.statements.at(-1) as string);
      const lifetimeMs = ((exp ?? 0) - (iat ?? 0)) * 1000;
      delay = Math.max(RETRY_MIN_MS, (iat ?? 0) * 1000 + lifetimeMs / 3 - deps.clock.now().getTime());
    }
    timer = setTimeout(() => {
      refresh().then(
        (granted) => {
          failures = granted || state?.revoked ? 0 : failures + 1;
        },
        (error: unknown) => {
          failures += 1;
          deps.log('fetching the delegation statement from the parent failed', error);
        },
      ).finally(schedule);
    }, delay);
    timer.unref();
  }

  return {
    // After a revocation the chain keeps its links but loses its statements: nothing verifies.
    trustChain: () => {
      if (parentUrl) keepCurrent();
      return state ? { delegationChain: state.delegation_chain, statements: state.statements } : { delegationChain: [registryId], statements: [] };
    },
    revoked: () => state?.revoked,
    parent: () => (state && !state.revoked ? { id: state.parent_id, jwks: state.issuer_jwks } : undefined),
    refresh,
    start() {
      if (!parentUrl || !stopped) return;
      stopped = false;
      failures = 0;
      // The first fetch goes at once; schedule() then keeps the grant fresh.
      refresh().then(
        () => undefined,
        (error: unknown) => {
          failures += 1;
          deps.log('fetching the delegation statement from the parent failed', error);
        },
      ).finally(schedule);
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
