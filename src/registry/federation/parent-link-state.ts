/**
 * What a registry's link to its parent holds (./parent-link.ts): the last grant, when it was read
 * from storage, and the timers and counters that keep it fresh. One object, passed to the functions
 * that fetch (./parent-grant.ts) and schedule, so no closure hides it.
 */
import { decodeJwt } from 'jose';
import type { FederationClient } from '../../client/federation-client.ts';
import type { Clock } from '../../core/clock.ts';
import type { RegistrySigner } from '../signing-keys/index.ts';
import type { Storage } from '../storage/database.ts';
import { readFederationState } from './storage/federation-state-store.ts';
import type { DelegationGrant } from './child-registry-types.ts';

/** The name the grant is stored under (federation state). */
export const STATE_NAME = 'delegation';

/** What this registry last received from its parent. */
export type ParentState = DelegationGrant & { parent_url: string; parent_id: string; fetched_at: string; revoked?: { reason: string | null } };

export type ParentLinkDeps = {
  parentUrl: string | undefined;
  registryId: string;
  storage: Storage;
  signer: RegistrySigner;
  clock: Clock;
  timeoutMs: number;
  log: (message: string, error?: unknown) => void;
  fetch?: typeof fetch;
};

export type LinkState = {
  readonly deps: ParentLinkDeps;
  /** The parent's federation endpoints; none without a parent. */
  readonly parent: FederationClient | undefined;
  grant: ParentState | undefined;
  /** `Date.now()` of the last read of the stored grant. */
  grantReadAt: number;
  timer: NodeJS.Timeout | undefined;
  failures: number;
  stopped: boolean;
  /** `Date.now()` of the last fetch caused by a key the parent does not name yet. */
  nudgedAt: number;
  /** The last statement decoded for its keys, and their kids. */
  namedKids: { statement: string | undefined; kids: string[] };
  /** The fetch under way, shared by every caller meanwhile. */
  inFlight: Promise<boolean> | undefined;
};

/** The stored grant, if it is from the configured parent (after a configuration change it is not this registry's chain). */
export async function readStoredGrant(deps: ParentLinkDeps): Promise<ParentState | undefined> {
  const stored = await readFederationState<ParentState>(deps.storage.db, STATE_NAME);
  return stored && stored.parent_url === deps.parentUrl ? stored : undefined;
}

/**
 * The kids the parent holds for this registry: those its last statement named. Decoded once per
 * statement: trustChain() asks on every routing answer and bundle.
 */
export function kidsKnownToParent(link: LinkState): string[] {
  const last = link.grant?.statements.at(-1);
  if (last !== link.namedKids.statement) {
    const keys = last ? ((decodeJwt(last).jwks as { keys?: Array<{ kid?: unknown }> } | undefined)?.keys ?? []) : [];
    link.namedKids = { statement: last, kids: keys.map((key) => key.kid).filter((kid): kid is string => typeof kid === 'string') };
  }
  return link.namedKids.kids;
}
