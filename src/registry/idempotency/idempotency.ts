import { createHash } from 'node:crypto';
import { stringify } from 'safe-stable-stringify';
import type { CallContext } from '../../core/call-context.ts';
import type { Clock } from '../../core/clock.ts';
import { WardError } from '../../core/errors.ts';
import type { Storage } from '../storage/database.ts';
import {
  findIdempotencyRecord,
  insertClaim,
  releaseClaim,
  takeOverClaim,
} from '../storage/stores/idempotency-store.ts';
import { runWrite, type WriteUnit } from '../storage/write-unit.ts';
import { withRelaxedDurability } from '../storage/relaxed-durability.ts';

/** Keys are kept this long (contract §2). */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;
/** A claim whose holder has not finished in this time is presumed dead and may be taken over. */
export const IDEMPOTENCY_LOCK_MS = 60 * 1000;

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

  const replay = await claim(deps, scopeKey, requestHash);
  if (replay) return { ...replay, status: 200, replayed: true };

  try {
    await precheck?.();
    const { result } = await runWrite(deps.storage, async (unit) => {
      const response = await work(unit);
      unit.completeClaim({
        scope_key: scopeKey,
        status_code: response.status,
        headers: response.headers,
        body: JSON.stringify(response.replayBody ?? response.body),
      });
      return response;
    });
    return { ...result, replayed: false };
  } catch (error) {
    await releaseClaim(deps.storage.db, scopeKey, requestHash);
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

/** Claims the key, or returns the stored response to replay, or throws the reason it cannot. */
async function claim(
  deps: { storage: Storage; clock: Clock },
  scopeKey: string,
  requestHash: string,
): Promise<StoredResponse | undefined> {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const now = deps.clock.now();
    const fresh = {
      request_hash: requestHash,
      locked_until: new Date(now.getTime() + IDEMPOTENCY_LOCK_MS).toISOString(),
      expires_at: new Date(now.getTime() + IDEMPOTENCY_RETENTION_MS).toISOString(),
      created_at: now.toISOString(),
    };
    // Most keys are new: the claim is tried first, so they cost one statement, and the stored record
    // is read only when the key was there already. A claim only guards a request in flight: losing
    // it in a crash loses nothing acknowledged.
    if (await withRelaxedDurability(deps.storage, (db) => insertClaim(db, { scope_key: scopeKey, ...fresh }))) return undefined;
    const existing = await findIdempotencyRecord(deps.storage.db, scopeKey);
    if (!existing) continue; // released between our insert and read: try again
    const nowIso = now.toISOString();
    const expired = existing.expires_at <= nowIso;
    const abandoned = existing.state === 'in_progress' && existing.locked_until <= nowIso;
    if (expired || abandoned) {
      if (await takeOverClaim(deps.storage.db, existing, fresh)) return undefined;
      continue;
    }
    if (existing.request_hash !== requestHash) {
      throw new WardError('IDEMPOTENCY_KEY_REUSED', 'This X-Idempotency-Key was used with a different request.');
    }
    if (existing.state === 'in_progress') {
      throw new WardError('IDEMPOTENCY_KEY_IN_PROGRESS', undefined, {}, 1000);
    }
    return {
      status: existing.status_code ?? 200,
      headers: existing.response_headers ?? {},
      body: existing.response_body === null ? null : JSON.parse(existing.response_body),
    };
  }
  throw new WardError('IDEMPOTENCY_KEY_IN_PROGRESS', undefined, {}, 1000);
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
