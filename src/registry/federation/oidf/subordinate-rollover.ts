/**
 * A subordinate's key rollover read from its own entity configuration (OIDF §3, docs/federation.md
 * "Key rollover through OpenID Federation"): when this registry serves its fetch endpoint for a child,
 * it first reads the child's `/.well-known/openid-federation`. A configuration the child signed with
 * a key this registry already holds for it, fresh, about the registry at that address and newer than
 * the last one accepted, replaces the child's keys under the rules every rollover follows
 * (../federation/child-key-rollover.ts), so the statement names the key the child rotated to without
 * the child presenting anything. A failed, refused or slow read never fails the fetch: the statement
 * is then issued with the keys held (docs/decisions.md 91). The read is capped well below the
 * federation timeout: the child building its own chain is usually the one fetching, within that
 * timeout, so the read must leave it time for the statement (docs/decisions.md 99).
 */
import { isDeepStrictEqual } from 'node:util';
import { ENTITY_STATEMENT_TYP, WARD_REGISTRY_ENTITY_TYPE, entityIdentifier, type EntityStatementClaims } from '../../../contract/openid-federation.ts';
import { ENTITY_STATEMENT_MAX_BYTES, fetchEntityConfiguration } from '../../../client/openid-federation-client.ts';
import { SKEW_MS, verifiedPayload, type PublishedJwk } from '../../../core/crypto/key-set.ts';
import { acceptedKeys, replaceChildKeys, type KeyUpdate } from '../child-key-rollover.ts';
import type { RegistryRow } from '../storage/registry-store.ts';
import type { OidfDeps } from './oidf-deps.ts';

/** A child's configuration is read at most this often per instance: the fetch endpoint is public. */
export const READ_INTERVAL_MS = 1000;
/** The longest a fetch waits for the read, however long REGISTRY_FEDERATION_TIMEOUT_MS is. */
export const READ_CAP_MS = 500;
/** A child's failed reads are logged at most this often per instance (anyone can make the parent read). */
export const LOG_INTERVAL_MS = 60_000;

/**
 * How long a fetch waits for the child's configuration: a quarter of the federation timeout (what the
 * child fetching its statement waits for the answer), at most {@link READ_CAP_MS}.
 */
export function readTimeoutMs(federationTimeoutMs: number): number {
  return Math.max(1, Math.min(Math.floor(federationTimeoutMs / 4), READ_CAP_MS));
}

/** The child's row after reading its entity configuration (the same row when nothing changed); never throws. */
export type SubordinateRollover = (row: RegistryRow) => Promise<RegistryRow>;

type RolloverDeps = Pick<OidfDeps, 'config' | 'clock' | 'fetch'> & {
  storage: Parameters<typeof replaceChildKeys>[0];
  log: (message: string, error?: unknown) => void;
  /** How often a child's failed reads are logged at most ({@link LOG_INTERVAL_MS} unless a test says). */
  logEveryMs?: number;
};

/**
 * Reads each child's configuration once at a time and then not again for {@link READ_INTERVAL_MS} on
 * this instance: a fetch during a read joins it, one soon after takes the keys as they are (the last
 * read's result is in the row already). So a child costs at most one read a second, however often its
 * statement is fetched.
 */
export function createSubordinateRollover(deps: RolloverDeps): SubordinateRollover {
  const reads = new Map<string, { doneAt: number; inFlight: Promise<RegistryRow> | undefined }>();
  const logged = new Map<string, { at: number; suppressed: number }>();
  /** A child's failures, at most one line per {@link LOG_INTERVAL_MS}, saying how many were left out since. */
  const logFailure = (childId: string, message: string, error?: unknown) => {
    const nowMs = Date.now();
    const last = logged.get(childId);
    if (last && nowMs - last.at < (deps.logEveryMs ?? LOG_INTERVAL_MS)) {
      last.suppressed += 1;
      return;
    }
    const more = last && last.suppressed > 0 ? ` (${last.suppressed} more failure(s) of this child not logged since the last line)` : '';
    logged.set(childId, { at: nowMs, suppressed: 0 });
    deps.log(`${message}${more}`, error);
  };
  return (row) => {
    if (row.api_base_url === null) return Promise.resolve(row);
    const last = reads.get(row.id);
    if (last?.inFlight) return last.inFlight;
    if (last && Date.now() - last.doneAt < READ_INTERVAL_MS) return Promise.resolve(row);
    const entry: { doneAt: number; inFlight: Promise<RegistryRow> | undefined } = { doneAt: Number.POSITIVE_INFINITY, inFlight: undefined };
    entry.inFlight = readAndRoll(deps, row, (message) => logFailure(row.id, message))
      .catch((error: unknown) => {
        logFailure(row.id, `reading the entity configuration of ${row.id} failed`, error);
        return row;
      })
      .finally(() => {
        entry.inFlight = undefined;
        entry.doneAt = Date.now();
      });
    reads.set(row.id, entry);
    return entry.inFlight;
  };
}

async function readAndRoll(deps: RolloverDeps, row: RegistryRow, logFailure: (message: string) => void): Promise<RegistryRow> {
  const entityId = entityIdentifier(row.api_base_url as string);
  const timeoutMs = readTimeoutMs(deps.config.REGISTRY_FEDERATION_TIMEOUT_MS);
  const answer = await fetchEntityConfiguration(entityId, { fetch: deps.fetch, timeoutMs, maxBytes: ENTITY_STATEMENT_MAX_BYTES });
  if (!answer.ok) {
    logFailure(`the entity configuration of ${row.id} could not be read: ${answer.message}`);
    return row;
  }
  const now = deps.clock.now();
  const update = await offeredKeys(row, entityId, answer.jwt, now);
  if (!update || isDeepStrictEqual(update.keys, row.jwks.keys)) return row;
  return replaceChildKeys(deps.storage, row, update, now, 'openid_federation');
}

/**
 * The keys the configuration offers, when it is an `entity-statement+jwt` about itself at `entityId`
 * (`iss` = `sub`), for the registry of this row, inside `iat`..`exp` (60 s of skew), signed by a key
 * this registry holds for the child inside its window, and issued after the last configuration
 * accepted. OIDF's `iat` is in seconds and `entity_iat` in milliseconds: a configuration of the same
 * second as the last one accepted is not newer, and the next read (a second later) carries it. One
 * dated ahead (inside the skew) is recorded as issued now (../federation/child-key-rollover.ts).
 */
export async function offeredKeys(row: RegistryRow, entityId: string, jwt: string, now: Date): Promise<KeyUpdate | undefined> {
  const claims = (await verifiedPayload(jwt, ENTITY_STATEMENT_TYP, row.jwks.keys as PublishedJwk[], now)) as Partial<EntityStatementClaims> | undefined;
  if (typeof claims !== 'object' || claims === null) return undefined;
  if (claims.iss !== entityId || claims.sub !== entityId) return undefined;
  if (typeof claims.iat !== 'number' || typeof claims.exp !== 'number') return undefined;
  const nowMs = now.getTime();
  if (claims.iat * 1000 > nowMs + SKEW_MS || claims.exp * 1000 < nowMs - SKEW_MS) return undefined;
  const ward = claims.metadata?.[WARD_REGISTRY_ENTITY_TYPE] as { registry_id?: unknown } | undefined;
  if (ward?.registry_id !== row.id) return undefined;
  return acceptedKeys(row, claims.jwks?.keys, claims.iat * 1000, nowMs);
}
