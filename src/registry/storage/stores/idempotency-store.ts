import type { Kysely } from 'kysely';
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
};

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
export async function insertClaim(
  db: Db,
  claim: { scope_key: string; request_hash: string; locked_until: string; expires_at: string; created_at: string },
): Promise<boolean> {
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
 * Takes over a claim whose holder is gone (its lock expired, or the key itself expired): only if the
 * row is still the one the caller looked at, so two takers cannot both win.
 */
export async function takeOverClaim(
  db: Db,
  seen: { scope_key: string; locked_until: string },
  claim: { request_hash: string; locked_until: string; expires_at: string; created_at: string },
): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_keys')
    .set({ ...claim, state: 'in_progress', status_code: null, response_headers: null, response_body: null })
    .where('scope_key', '=', seen.scope_key)
    .where('locked_until', '=', seen.locked_until)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** A claimed key's answer, to keep for replays: written in the transaction of the change it answers. */
export type ClaimCompletion = { scope_key: string; status_code: number; headers: Record<string, string>; body: string };

/** A completion as the idempotency table stores it (`headers` as JSON text). */
export type CompletionRow = { scope_key: string; status_code: number; headers: string; body: string };

/** The stored form of a completion; a TypeError for one the table would refuse. */
export function completionRow(completion: ClaimCompletion): CompletionRow {
  const headers = JSON.stringify(completion.headers) as string | undefined;
  if (typeof completion.scope_key !== 'string' || !Number.isInteger(completion.status_code) || typeof completion.body !== 'string' || typeof headers !== 'string') {
    throw new TypeError('an idempotent answer needs a key, an integer status, headers and a body of text');
  }
  return { scope_key: completion.scope_key, status_code: completion.status_code, headers, body: completion.body };
}

/** Marks claims completed with their answers (write units write these with their batch's close, write-unit.ts). */
export async function completeClaims(tx: Db, rows: readonly CompletionRow[]): Promise<void> {
  for (const row of rows) {
    await runCompiled(tx, 'idempotency completion', ['completed', row.status_code, row.headers, row.body, row.scope_key], () =>
      tx
        .updateTable('idempotency_keys')
        .set({ state: 'completed', status_code: row.status_code, response_headers: row.headers, response_body: row.body })
        .where('scope_key', '=', row.scope_key),
    );
  }
}

export async function releaseClaim(db: Db, scopeKey: string, requestHash: string): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('scope_key', '=', scopeKey)
    .where('request_hash', '=', requestHash)
    .where('state', '=', 'in_progress')
    .execute();
}

export async function deleteExpiredIdempotencyKeys(db: Db, now: string): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}
