import { createHash, randomUUID } from 'node:crypto';
import { stringify } from 'safe-stable-stringify';
import type { CallContext } from '../../core/call-context.ts';
import type { Clock } from '../../core/clock.ts';
import { WardError } from '../../core/errors.ts';
import type { Storage } from './database.ts';
import {
  ClaimLostError,
  claimHolderLiveUntil,
  findIdempotencyRecord,
  insertClaim,
  releaseClaim,
  takeOverClaim,
  type IdempotencyRecord,
  type NewClaim,
} from './stores/idempotency-store.ts';
import { runWrite, type WriteUnit } from './write-unit.ts';
import { withRelaxedDurability } from './relaxed-durability.ts';

/** Keys are kept this long (contract §2). */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;
/**
 * A claim whose holder has not finished in this time may be taken over whatever its heartbeat says.
 * A claim whose holder's heartbeat lapses is taken over sooner: within the heartbeat's lapse.
 */
export const IDEMPOTENCY_LOCK_MS = 60 * 1000;
/** Added to a hint to retry at the holder's lapse: clocks of instances differ by this much or less. */
const RETRY_MARGIN_MS = 250;
/** The hint when nothing better is known (a claim taken over under a request that was running). */
const DEFAULT_RETRY_MS = 1000;

/**
 * The heartbeat id of the instance each storage's claims are made by, when it is listening and its
 * heartbeat is current (instance-heartbeat.ts registers it). A claim without one (an app driven by
 * inject(), or a heartbeat that cannot write) is only taken over when its 60 s lock expires.
 */
const claimHolders = new WeakMap<Storage, () => string | null>();

export function registerClaimHolder(storage: Storage, holder: (() => string | null) | undefined): void {
  if (holder) claimHolders.set(storage, holder);
  else claimHolders.delete(storage);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type IdempotentRequest = {
  /** The `X-Idempotency-Key` header, if sent. */
  key: string | undefined;
  /** Whether the route requires the header (API-key creation accepts but does not require it). */
  required: boolean;
  credentialId: string;
  method: string;
  path: string;
  /** Hash of everything that makes two requests "the same" (see {@link requestFingerprint}). */
  fingerprint: string;
};

/**
 * The fingerprint of a request: its body as sent (before defaults are filled in), canonicalised so
 * key order does not matter, and any precondition header.
 */
export function requestFingerprint(body: unknown, ifMatch: string | string[] | undefined): string {
  return sha256(stringify({ body: body ?? null, ifMatch: ifMatch ?? null }) ?? '');
}

/** Where a key is stored: the key is scoped to the caller's credential, the method and the path. */
export function idempotencyScopeKey(credentialId: string, method: string, path: string, key: string): string {
  return sha256([credentialId, method, path, key.toLowerCase()].join('\n'));
}

/**
 * A response to send and keep. `replayBody`, when given, is what is kept instead of `body`: a secret
 * in the first answer (a raw API key) is shown once and never stored, not even for a replay.
 */
export type StoredResponse = { status: number; headers: Record<string, string>; body: unknown; replayBody?: unknown };
export type IdempotentOutcome<Body = unknown> = StoredResponse & { body: Body; replayed: boolean };

/**
 * Runs a state-changing request at most once per idempotency key (contract §2):
 * 1. claims the key in its own short transaction, so a concurrent duplicate sees the claim at once
 *    and gets IDEMPOTENCY_KEY_IN_PROGRESS instead of running the work a second time;
 * 2. runs the work and records its response in the SAME transaction as the change, so a crash can
 *    never leave a committed change without its stored response (a retry would otherwise redo it);
 * 3. on failure releases the claim: a failed request changed nothing, so a retry may run it again.
 * `precheck` (preconditions such as If-Match) runs after the claim, so a replay is answered from the
 * stored response even once the precondition no longer holds.
 * A replay answers 200 with the stored headers and body, whatever the first status was.
 */
export async function executeIdempotent(
  deps: { storage: Storage; clock: Clock },
  request: IdempotentRequest,
  work: (unit: WriteUnit) => Promise<StoredResponse>,
  precheck?: () => Promise<void>,
): Promise<IdempotentOutcome> {
  if (request.key === undefined) {
    if (request.required) throw new WardError('IDEMPOTENCY_KEY_REQUIRED');
    await precheck?.();
    const { result } = await runWrite(deps.storage, work);
    return { ...result, replayed: false };
  }
  if (!UUID.test(request.key)) {
    throw new WardError('VALIDATION_ERROR', 'X-Idempotency-Key must be a UUID.', {
      errors: [{ in: 'header', pointer: '/x-idempotency-key', reason: 'must be a UUID' }],
    });
  }
  const scopeKey = idempotencyScopeKey(request.credentialId, request.method, request.path, request.key);
  const requestHash = request.fingerprint;

  const claimed = await claim(deps, scopeKey, requestHash);
  if ('replay' in claimed) return { ...claimed.replay, status: 200, replayed: true };

  try {
    await precheck?.();
    const { result } = await runWrite(deps.storage, async (unit) => {
      const response = await work(unit);
      unit.completeClaim({
        scope_key: scopeKey,
        claim_token: claimed.token,
        status_code: response.status,
        headers: response.headers,
        body: JSON.stringify(response.replayBody ?? response.body),
      });
      return response;
    });
    return { ...result, replayed: false };
  } catch (error) {
    await releaseClaim(deps.storage.db, scopeKey, claimed.token);
    // Another instance took the key over (this one's heartbeat lapsed): the change rolled back, and
    // the taker's run is the one a retry is answered with.
    if (error instanceof ClaimLostError) throw new WardError('IDEMPOTENCY_KEY_IN_PROGRESS', undefined, {}, DEFAULT_RETRY_MS);
    throw error;
  }
}

/**
 * A write as its caller asks for it: who asks, and, from the API, the idempotency request it is made
 * once under. A caller of the registry's own (the seed, the CLI) sends none: its write runs once,
 * in its own unit, as a request without a key would.
 */
export type WriteRequest = { ctx: CallContext; idempotency?: IdempotentRequest };

/**
 * How a service opens its own write unit: `work` in a unit of its own, at most once per idempotency
 * key when the request has one ({@link executeIdempotent}), with `precheck` before the unit.
 */
export async function writeOnce<Body>(
  deps: { storage: Storage; clock: Clock },
  write: WriteRequest,
  work: (unit: WriteUnit) => Promise<StoredResponse & { body: Body }>,
  precheck?: () => Promise<void>,
): Promise<IdempotentOutcome<Body>> {
  // A replay's body is the stored JSON of the first answer's (or of its `replayBody`).
  return executeIdempotent(deps, write.idempotency ?? { ...SYSTEM_WRITE, credentialId: write.ctx.principal.credentialId }, work, precheck) as Promise<IdempotentOutcome<Body>>;
}

/** The idempotency request of a write that has no key and needs none (never stored, never compared). */
const SYSTEM_WRITE = { key: undefined, required: false, method: '', path: '', fingerprint: '' } as const;

/** Claims the key (returning the claim's token), or returns the stored response to replay, or throws the reason it cannot. */
async function claim(
  deps: { storage: Storage; clock: Clock },
  scopeKey: string,
  requestHash: string,
): Promise<{ token: string } | { replay: StoredResponse }> {
  let retryAfterMs = DEFAULT_RETRY_MS;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const now = deps.clock.now();
    const fresh: NewClaim = {
      request_hash: requestHash,
      locked_until: new Date(now.getTime() + IDEMPOTENCY_LOCK_MS).toISOString(),
      expires_at: new Date(now.getTime() + IDEMPOTENCY_RETENTION_MS).toISOString(),
      created_at: now.toISOString(),
      holder: claimHolders.get(deps.storage)?.() ?? null,
      claim_token: randomUUID(),
    };
    // Most keys are new: the claim is tried first, so they cost one statement, and the stored record
    // is read only when the key was there already. A claim only guards a request in flight: losing
    // it in a crash loses nothing acknowledged.
    if (await withRelaxedDurability(deps.storage, (db) => insertClaim(db, { scope_key: scopeKey, ...fresh }))) return { token: fresh.claim_token };
    const existing = await findIdempotencyRecord(deps.storage.db, scopeKey);
    if (!existing) continue; // released between our insert and read: try again
    const nowIso = now.toISOString();
    const expired = existing.expires_at <= nowIso;
    if (existing.state === 'completed' && !expired) {
      if (existing.request_hash !== requestHash) throw reused();
      return { replay: storedResponse(existing) };
    }
    const holderUntil = expired ? null : await heldUntil(deps, existing, nowIso);
    if (holderUntil === null) {
      if (await takeOverClaim(deps.storage.db, existing, fresh, nowIso)) return { token: fresh.claim_token };
      continue;
    }
    if (existing.request_hash !== requestHash) throw reused();
    // The honest wait: the holder finishes before then, or it is gone and the key can be taken over.
    retryAfterMs = Math.max(holderUntil - now.getTime(), 0) + RETRY_MARGIN_MS;
    break;
  }
  throw new WardError('IDEMPOTENCY_KEY_IN_PROGRESS', undefined, {}, retryAfterMs);
}

/**
 * Until when (epoch ms) an in-progress claim stays its holder's: its 60 s lock, or sooner the end of
 * its holder's heartbeat; null when it may be taken over now.
 */
async function heldUntil(deps: { storage: Storage; clock: Clock }, record: IdempotencyRecord, nowIso: string): Promise<number | null> {
  if (record.locked_until <= nowIso) return null;
  const locked = Date.parse(record.locked_until);
  if (record.holder === null) return locked;
  const live = await claimHolderLiveUntil(deps.storage.db, record.holder, nowIso);
  return live === null ? null : Math.min(locked, Date.parse(live));
}

function reused(): WardError {
  return new WardError('IDEMPOTENCY_KEY_REUSED', 'This X-Idempotency-Key was used with a different request.');
}

function storedResponse(record: IdempotencyRecord): StoredResponse {
  return {
    status: record.status_code ?? 200,
    headers: record.response_headers ?? {},
    body: record.response_body === null ? null : JSON.parse(record.response_body),
  };
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
