/**
 * A registry's link to its parent (REGISTRY_PARENT_URL; docs/federation.md). It fetches a fresh
 * delegation grant well before the current statement expires, presenting a self-signed entity
 * configuration so a key rotation here reaches the parent's statements, and keeps the last good
 * grant in storage so every instance and a restart start from it. Without a parent the registry is
 * its own trust anchor: its chain is itself alone.
 */
import { compactVerify, createLocalJWKSet, decodeJwt, type JWK } from 'jose';
import type { Clock } from '../../core/clock.ts';
import type { RegistrySigner } from '../../core/crypto/registry-signer.ts';
import type { Storage } from '../../core/storage/database.ts';
import { readFederationState, writeFederationState } from '../../core/storage/stores/federation-state-store.ts';
import { ENTITY_CONFIGURATION_TYP, type DelegationGrant } from './child-registries.ts';

const STATE_NAME = 'delegation';
const ENTITY_CONFIGURATION_LIFETIME_S = 300;
const RETRY_MIN_MS = 1000;
const RETRY_MAX_MS = 30_000;

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
  let state = parentUrl ? await readFederationState<ParentState>(deps.storage.db, STATE_NAME) : undefined;
  // A stored grant from another parent (the configuration changed) is not this registry's chain.
  if (state && state.parent_url !== parentUrl) state = undefined;
  let timer: NodeJS.Timeout | undefined;
  let failures = 0;
  let stopped = true;

  /** Signed by every published key: the parent may know only the one before a rotation. */
  async function entityConfiguration(): Promise<string> {
    const iat = Math.floor(deps.clock.now().getTime() / 1000);
    const claims = { iss: registryId, sub: registryId, iat, exp: iat + ENTITY_CONFIGURATION_LIFETIME_S, jwks: deps.signer.jwks() };
    return (await deps.signer.signWithEveryKey(claims, ENTITY_CONFIGURATION_TYP)).join(' ');
  }

  async function refresh(): Promise<boolean> {
    if (!parentUrl) return false;
    const url = `${parentUrl.replace(/\/+$/, '')}/v1/federation/fetch?sub=${encodeURIComponent(registryId)}`;
    const response = await fetchImpl(url, {
      headers: { accept: 'application/json', 'ward-entity-configuration': await entityConfiguration() },
      signal: AbortSignal.timeout(deps.timeoutMs),
      redirect: 'error',
    });
    const body = (await response.json().catch(() => undefined)) as Record<string, unknown> | undefined;
    if (response.status === 403 && (body?.error as { code?: string } | undefined)?.code === 'REGISTRY_REVOKED') {
      // Revoked: the chain goes at once, so bundles issued from now on do not verify either.
      if (state) state = { ...state, statements: [], revoked: { reason: ((body?.error as { details?: { reason?: string } }).details?.reason) ?? null } };
      if (state) await writeFederationState(deps.storage.db, STATE_NAME, state, deps.clock.now().toISOString());
      return false;
    }
    if (!response.ok || !body) throw new Error(`the parent answered HTTP ${response.status}`);
    const grant = await checkedGrant(body);
    state = { ...grant, parent_url: parentUrl, parent_id: grant.delegation_chain.at(-2) as string, fetched_at: deps.clock.now().toISOString() };
    await writeFederationState(deps.storage.db, STATE_NAME, state, state.fetched_at);
    return true;
  }

  /** A grant is kept only if it is about this registry, names its signing key and verifies with the parent's keys. */
  async function checkedGrant(body: Record<string, unknown>): Promise<DelegationGrant> {
    const grant = body as unknown as DelegationGrant;
    const { delegation_chain: chain, statements } = grant;
    if (!Array.isArray(chain) || !Array.isArray(statements) || chain.at(-1) !== registryId || statements.length !== chain.length - 1) {
      throw new Error('the parent answered a grant for another registry or a broken chain');
    }
    const statement = statements.at(-1) as string;
    const { payload } = await compactVerify(statement, createLocalJWKSet(grant.issuer_jwks), { algorithms: ['ES256', 'EdDSA', 'RS256'] });
    const claims = JSON.parse(new TextDecoder().decode(payload)) as { sub?: string; jwks?: { keys?: Array<{ kid?: string }> } };
    if (claims.sub !== registryId) throw new Error('the statement names another registry');
    if (!claims.jwks?.keys?.some((key) => key.kid === deps.signer.kid)) throw new Error("the statement does not name this registry's signing key yet");
    return grant;
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
    trustChain: () => (state ? { delegationChain: state.delegation_chain, statements: state.statements } : { delegationChain: [registryId], statements: [] }),
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
