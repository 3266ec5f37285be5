/**
 * A registry's link to its parent (REGISTRY_PARENT_URL; docs/federation.md). It fetches a fresh
 * delegation grant well before the current statement expires (./parent-grant.ts), presenting a
 * self-signed entity configuration so a key rotation here reaches the parent's statements, and keeps
 * the last good grant in storage so every instance and a restart start from it. Without a parent the
 * registry is its own trust anchor: its chain is itself alone.
 */
import { decodeJwt, type JWK } from 'jose';
import { createFederationClient } from '../../client/federation-client.ts';
import { recordRevocation, refreshGrant } from './parent-grant.ts';
import { kidsKnownToParent, readStoredGrant, type LinkState, type ParentLinkDeps } from './parent-link-state.ts';

export type { ParentState } from './parent-link-state.ts';

const RETRY_MIN_MS = 1000;
const RETRY_MAX_MS = 30_000;
const STATE_REREAD_MS = 5_000;
const MAX_GRANT_BYTES = 256 * 1024;

export type ParentLink = {
  /** The chain from the root down to this registry and the statements proving it. */
  trustChain(): { delegationChain: string[]; statements: string[] };
  /** Set once the parent refused this registry as revoked: its advice and bundles no longer stand for the federation. */
  revoked(): { reason: string | null } | undefined;
  /** The parent's registry URI and public keys, once a grant arrived (federation tokens are checked with them). */
  parent(): { id: string; jwks: { keys: JWK[] } } | undefined;
  /** Fetches a grant now (after a key rotation; tests). Resolves false when the parent did not grant one. */
  refresh(): Promise<boolean>;
  /**
   * Records that the parent revoked this registry, as confirmed through OpenID Federation (its signed
   * trust mark status: ../oidf/superior-revocation.ts), in the same stored state as a revocation
   * confirmed here, so `revoked()` holds on every instance and after a restart.
   */
  confirmRevoked(parentId?: string): Promise<void>;
  start(): void;
  stop(): void;
};

export async function createParentLink(deps: ParentLinkDeps): Promise<ParentLink> {
  const { parentUrl, registryId } = deps;
  const link: LinkState = {
    deps,
    parent: parentUrl ? createFederationClient({ baseUrl: parentUrl, fetch: deps.fetch, timeoutMs: deps.timeoutMs, maxBytes: MAX_GRANT_BYTES }) : undefined,
    grant: parentUrl ? await readStoredGrant(deps) : undefined,
    grantReadAt: Date.now(),
    timer: undefined,
    failures: 0,
    stopped: true,
    nudgedAt: 0,
    namedKids: { statement: undefined, kids: [] },
    inFlight: undefined,
  };
  return {
    // After a revocation the chain keeps its links but loses its statements: nothing verifies.
    trustChain: () => {
      if (parentUrl) keepCurrent(link);
      const { grant } = link;
      return grant ? { delegationChain: grant.delegation_chain, statements: grant.statements } : { delegationChain: [registryId], statements: [] };
    },
    // Asked on every request an instance serves (its routes refuse once revoked): so it re-reads the
    // stored state too, as trustChain() does, and learns of a revocation another instance confirmed.
    revoked: () => {
      if (parentUrl) rereadStored(link);
      return link.grant?.revoked;
    },
    parent: () => (link.grant && !link.grant.revoked ? { id: link.grant.parent_id, jwks: link.grant.issuer_jwks } : undefined),
    refresh: () => refreshGrant(link),
    confirmRevoked: (parentId) => recordRevocation(link, null, parentId),
    start() {
      if (!parentUrl || !link.stopped) return;
      link.stopped = false;
      link.failures = 0;
      // The first fetch goes at once; schedule() then keeps the grant fresh.
      refreshGrant(link)
        .then(
          () => undefined,
          (error: unknown) => {
            link.failures += 1;
            deps.log('fetching the delegation statement from the parent failed', error);
          },
        )
        .finally(() => schedule(link));
    },
    stop() {
      link.stopped = true;
      clearTimeout(link.timer);
    },
  };
}

/**
 * Other instances fetch and rotate too: re-read the stored grant every few seconds, and fetch at
 * once when the chain does not name the key this instance now signs with.
 */
function keepCurrent(link: LinkState): void {
  const { deps } = link;
  const now = Date.now();
  rereadStored(link);
  if (!link.stopped && link.grant && !link.grant.revoked && now - link.nudgedAt > STATE_REREAD_MS && !kidsKnownToParent(link).includes(deps.signer.kid)) {
    link.nudgedAt = now;
    refreshGrant(link).catch((error: unknown) => deps.log('fetching the delegation after a key change failed', error));
  }
}

/** Adopts the stored grant when another instance stored a newer one; at most every {@link STATE_REREAD_MS}. */
function rereadStored(link: LinkState): void {
  const { deps } = link;
  const now = Date.now();
  if (now - link.grantReadAt <= STATE_REREAD_MS) return;
  link.grantReadAt = now;
  readStoredGrant(deps).then(
    (stored) => {
      if (stored && (!link.grant || stored.fetched_at > link.grant.fetched_at)) link.grant = stored;
    },
    (error: unknown) => deps.log('reading the stored delegation failed', error),
  );
}

/** The next fetch: backing off after failures, else once a third of the statement's life has passed. */
function schedule(link: LinkState): void {
  if (link.stopped) return;
  clearTimeout(link.timer);
  link.timer = setTimeout(() => {
    refreshGrant(link)
      .then(
        (granted) => {
          link.failures = granted || link.grant?.revoked ? 0 : link.failures + 1;
        },
        (error: unknown) => {
          link.failures += 1;
          link.deps.log('fetching the delegation statement from the parent failed', error);
        },
      )
      .finally(() => schedule(link));
  }, nextDelay(link));
  link.timer.unref();
}

function nextDelay(link: LinkState): number {
  const { grant, failures } = link;
  if (failures > 0) return Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** (failures - 1));
  if (!grant || grant.revoked) return grant?.revoked ? RETRY_MAX_MS : RETRY_MIN_MS;
  // Renew once a third of the statement's life has passed, so two failed renewals still leave time.
  const { iat, exp } = decodeJwt(grant.statements.at(-1) as string);
  const lifetimeMs = ((exp ?? 0) - (iat ?? 0)) * 1000;
  return Math.max(RETRY_MIN_MS, (iat ?? 0) * 1000 + lifetimeMs / 3 - link.deps.clock.now().getTime());
}
