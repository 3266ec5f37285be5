import { sql, type Kysely } from 'kysely';
import { runCompiled } from '../compiled-statements.ts';
import type { Database } from '../schema.ts';

type Db = Kysely<Database>;

export type IdempotencyRecord = {
  scope_key: string;
  request_hash: string;
  state: 'in_progress' | 'completed';
  status_code: number | null;
  response_headers: Record<string, string> | null;
  response_body: string | null;
  locked_until: string;
  expires_at: string;
  holder: string | null;
  claim_token: string | null;
};

/** A claim as it is written: who holds it, its token, and until when its lock and the key last. */
export type NewClaim = {
  request_hash: string;
  locked_until: string;
  expires_at: string;
  created_at: string;
  holder: string | null;
  claim_token: string;
};

/** The name of an instance's heartbeat lease (instance-heartbeat.ts). */
export const INSTANCE_LEASE_PREFIX = 'instance:';

export async function findIdempotencyRecord(db: Db, scopeKey: string): Promise<IdempotencyRecord | undefined> {
  const { rows } = await runCompiled(db, 'idempotency record', [scopeKey], () => db.selectFrom('idempotency_keys').selectAll().where('scope_key', '=', scopeKey));
  const row = rows[0];
  if (!row) return undefined;
  return {
    ...row,
    state: row.state as IdempotencyRecord['state'],
    status_code: row.status_code === null ? null : Number(row.status_code),
    response_headers: row.response_headers ? (JSON.parse(row.response_headers) as Record<string, string>) : null,
  };
}

/** Inserts an in-progress claim; false when another request holds the key already. */
export async function insertClaim(db: Db, claim: { scope_key: string } & NewClaim): Promise<boolean> {
  // Members in a fixed order: it is the order of the parameters below.
  const values = {
    scope_key: claim.scope_key,
    request_hash: claim.request_hash,
    locked_until: claim.locked_until,
    expires_at: claim.expires_at,
    created_at: claim.created_at,
    state: 'in_progress',
    status_code: null,
    response_headers: null,
    response_body: null,
    holder: claim.holder,
    claim_token: claim.claim_token,
  };
  const result = await runCompiled(db, 'idempotency claim', Object.values(values), () =>
    db
      .insertInto('idempotency_keys')
      .values(values)
      .onConflict((oc) => oc.column('scope_key').doNothing()),
  );
  return Number(result.numAffectedRows ?? 0n) === 1;
}

/**
 * When the holder of an in-progress claim has its heartbeat until (its lease's expiry), or null when
 * it has none: no holder named, or its lease lapsed or released.
 */
export async function claimHolderLiveUntil(db: Db, holder: string | null, now: string): Promise<string | null> {
  if (holder === null) return null;
  const row = await db
    .selectFrom('leases')
    .select('expires_at')
    .where('name', '=', `${INSTANCE_LEASE_PREFIX}${holder}`)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row?.expires_at ?? null;
}

/**
 * Takes over a claim whose holder is gone: the key expired, its lock expired, or (while in progress)
 * its holder's heartbeat has lapsed. One conditional statement that checks all of it again, and that
 * the row is still the claim the caller looked at (its token, or its lock for a claim without one),
 * so two takers cannot both win and a holder that has just finished keeps its answer.
 */
export async function takeOverClaim(
  db: Db,
  seen: { scope_key: string; locked_until: string; claim_token: string | null },
  claim: NewClaim,
  now: string,
): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_keys')
    .set({ ...claim, state: 'in_progress', status_code: null, response_headers: null, response_body: null })
    .where('scope_key', '=', seen.scope_key)
    .where('locked_until', '=', seen.locked_until)
    .where(sql<boolean>`claim_token is not distinct from ${seen.claim_token}`)
    .where((eb) =>
      eb.or([
        eb('expires_at', '<=', now),
        eb.and([
          eb('state', '=', 'in_progress'),
          eb.or([
            eb('locked_until', '<=', now),
            eb('holder', 'is not', null).and(
              eb.not(
                eb.exists(
                  eb
                    .selectFrom('leases')
                    .select('leases.name')
                    .where(sql<boolean>`leases.name = ${INSTANCE_LEASE_PREFIX} || idempotency_keys.holder`)
                    .where('leases.expires_at', '>', now),
                ),
              ),
            ),
          ]),
        ]),
      ]),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** A claimed key's answer, to keep for replays: written in the transaction of the change it answers. */
export type ClaimCompletion = { scope_key: string; claim_token?: string | null; status_code: number; headers: Record<string, string>; body: string };

/** A completion as the idempotency table stores it (`headers` as JSON text). */
export type CompletionRow = { scope_key: string; claim_token: string | null; status_code: number; headers: string; body: string };

/** The stored form of a completion; a TypeError for one the table would refuse. */
export function completionRow(completion: ClaimCompletion): CompletionRow {
  const headers = JSON.stringify(completion.headers) as string | undefined;
  if (typeof completion.scope_key !== 'string' || !Number.isInteger(completion.status_code) || typeof completion.body !== 'string' || typeof headers !== 'string') {
    throw new TypeError('an idempotent answer needs a key, an integer status, headers and a body of text');
  }
  return { scope_key: completion.scope_key, claim_token: completion.claim_token ?? null, status_code: completion.status_code, headers, body: completion.body };
}

/** A claim taken over by another instance before its holder could store the answer. */
export class ClaimLostError extends Error {
  readonly scopeKeys: readonly string[];
  constructor(scopeKeys: readonly string[]) {
    super('an idempotency claim was taken over by another instance before its answer was stored');
    this.scopeKeys = scopeKeys;
  }
}

/**
 * Marks claims completed with their answers (write units write these with their batch's close,
 * write-unit.ts), each only while it is still the claim its request made; throws ClaimLostError
 * otherwise, so the transaction that made the change rolls back.
 */
export async function completeClaims(tx: Db, rows: readonly CompletionRow[]): Promise<void> {
  const lost: string[] = [];
  for (const row of rows) {
    const result = await runCompiled(tx, 'idempotency completion', ['completed', row.status_code, row.headers, row.body, row.scope_key, 'in_progress', row.claim_token], () =>
      tx
        .updateTable('idempotency_keys')
        .set({ state: 'completed', status_code: row.status_code, response_headers: row.headers, response_body: row.body })
        .where('scope_key', '=', row.scope_key)
        .where('state', '=', 'in_progress')
        .where(sql<boolean>`claim_token is not distinct from ${row.claim_token}`),
    );
    if (Number(result.numAffectedRows ?? 0n) !== 1) lost.push(row.scope_key);
  }
  if (lost.length > 0) throw new ClaimLostError(lost);
}

/** Deletes an in-progress claim of a request that failed, if it is still this request's claim. */
export async function releaseClaim(db: Db, scopeKey: string, claimToken: string): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('scope_key', '=', scopeKey)
    .where('claim_token', '=', claimToken)
    .where('state', '=', 'in_progress')
    .execute();
}

export async function deleteExpiredIdempotencyKeys(db: Db, now: string): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}
