import { randomBytes } from 'node:crypto';
import { SCOPES, type CallContext, type Scope } from '../../core/call-context.ts';
import type { Clock } from '../../core/clock.ts';
import { WardError } from '../../core/errors.ts';
import { newUlid } from '../../core/ids.ts';
import type { Storage } from '../storage/database.ts';
import {
  ensureSecret,
  findApiKey,
  findApiKeyByHash,
  insertApiKey,
  listApiKeys,
  revokeApiKey,
  touchApiKey,
  type ApiKeyRow,
} from './storage/api-key-store.ts';
import type { WriteUnit } from '../storage/write-unit.ts';
import { writeOnce, type IdempotentOutcome, type WriteRequest } from '../storage/idempotency.ts';
import { PRICING_TIER_NAMES, effectiveLimits, type LimitOverrides, type PricingTier, type PricingTierLimits } from '../../core/pricing-tiers.ts';
import { decodeCursor, encodeCursor } from '../../contract/cursor.ts';
import { RAW_KEY_PATTERN, generateRawKey, hashKey, keyPrefix } from '../../contract/api-key-format.ts';

export type CreateApiKeyInput = {
  org_id: string;
  display_name: string;
  tier?: PricingTier;
  scopes?: Scope[];
  expires_at?: string;
  limits?: LimitOverrides;
};

/** What key details and lists show: never the raw key, never its hash. */
export type ApiKeyView = {
  key_id: string;
  org_id: string;
  display_name: string;
  tier: PricingTier;
  scopes: Scope[];
  key_prefix: string;
  active: boolean;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  limits: LimitOverrides | null;
};

export type AuthenticatedKey = { row: ApiKeyRow; tier: PricingTier; limits: PricingTierLimits };

/** Last use is recorded at most this often per key. */
const TOUCH_EVERY_MS = 60_000;

/**
 * API keys (contract §7): created with the raw key returned once, stored as an HMAC only, listed by
 * organisation, revoked with effect on the next request of every instance (each request looks the
 * key up), expiring at `expires_at`.
 */
export async function createApiKeyService(deps: { storage: Storage; clock: Clock; secret?: string }) {
  const configured = deps.secret ? Buffer.from(deps.secret, 'utf8') : undefined;
  const secret =
    configured ??
    Buffer.from(await ensureSecret(deps.storage.db, 'api-key-hmac', randomBytes(32).toString('base64url'), deps.clock.now().toISOString()), 'utf8');

  async function create(unit: WriteUnit, ctx: CallContext, input: CreateApiKeyInput) {
    const now = ctx.clock.now();
    validate(input, now);
    const rawKey = generateRawKey();
    const row: ApiKeyRow = {
      key_id: `key_${newUlid(now.getTime())}`,
      org_id: input.org_id,
      display_name: input.display_name,
      tier: input.tier ?? 'developer',
      scopes: [...new Set(input.scopes ?? ['registry:read'])],
      key_prefix: keyPrefix(rawKey),
      key_hash: hashKey(rawKey, secret),
      limits: input.limits ?? null,
      created_at: now.toISOString(),
      expires_at: input.expires_at ? new Date(input.expires_at).toISOString() : null,
      revoked_at: null,
      last_used_at: null,
    };
    await insertApiKey(unit.tx, row);
    // No prefix of the secret in the event: events go to the organisation and the administrators,
    // and the ledger commits to them sealed, salted by the write unit (docs/transparency.md).
    unit.emit({
      type: 'api_key.created',
      subject: row.key_id,
      occurred_at: row.created_at,
      data: { key_id: row.key_id, org_id: row.org_id, tier: row.tier, scopes: row.scopes },
    });
    return { ...view(row, now), raw_key: rawKey };
  }

  /** Revokes a key; revoking a revoked key again is accepted and changes nothing. */
  async function revoke(unit: WriteUnit, ctx: CallContext, keyId: string): Promise<void> {
    const row = await findApiKey(unit.tx, keyId);
    if (!row) throw new WardError('API_KEY_NOT_FOUND', undefined, { key_id: keyId });
    const at = ctx.clock.now().toISOString();
    if (await revokeApiKey(unit.tx, keyId, at)) {
      unit.emit({ type: 'api_key.revoked', subject: keyId, occurred_at: at, data: { key_id: keyId, org_id: row.org_id } });
    }
  }

  return {
    /** Creates a key inside a caller's write unit; the answer holds the raw key. */
    create,
    /** Revokes a key inside a caller's write unit. */
    revoke,

    /**
     * `POST /v1/admin/billing/api-keys` in its own write unit, at most once per idempotency key: 201
     * with the raw key. A replay answers without it: a secret is shown once and never stored.
     */
    async createOnce(write: WriteRequest, input: CreateApiKeyInput): Promise<IdempotentOutcome<ApiKeyView & { raw_key?: string }>> {
      return writeOnce(deps, write, async (unit) => {
        const created = await create(unit, write.ctx, input);
        const { raw_key: _raw, ...withoutSecret } = created;
        return { status: 201, headers: { location: `/v1/admin/billing/api-keys/${created.key_id}` }, body: created, replayBody: withoutSecret };
      });
    },

    /** `DELETE /v1/admin/billing/api-keys/{key_id}` in its own write unit (a DELETE is idempotent without a key). */
    async revokeOnce(write: WriteRequest, keyId: string): Promise<void> {
      await writeOnce(deps, write, async (unit) => {
        await revoke(unit, write.ctx, keyId);
        return { status: 204, headers: {}, body: null };
      });
    },

    async get(keyId: string, now: Date): Promise<ApiKeyView> {
      const row = await findApiKey(storage().db, keyId);
      if (!row) throw new WardError('API_KEY_NOT_FOUND', undefined, { key_id: keyId });
      return view(row, now);
    },

    async list(orgId: string | undefined, page: { cursor?: string; limit: number }, now: Date) {
      const afterId = page.cursor === undefined ? undefined : decodeCursor(page.cursor, 'api-keys');
      const rows = await listApiKeys(storage().db, orgId ? { orgId } : {}, { limit: page.limit + 1, ...(afterId ? { afterId } : {}) });
      const shown = rows.slice(0, page.limit);
      const last = shown.at(-1);
      return { api_keys: shown.map((r) => view(r, now)), next_cursor: rows.length > page.limit && last ? encodeCursor('api-keys', last.key_id) : null };
    },

    /** The key a raw key names, if it exists, is not revoked and has not expired; else undefined. */
    async authenticate(rawKey: string, now: Date): Promise<AuthenticatedKey | undefined> {
      if (!RAW_KEY_PATTERN.test(rawKey)) return undefined;
      const row = await findApiKeyByHash(storage().db, hashKey(rawKey, secret));
      if (!row || row.revoked_at !== null) return undefined;
      if (row.expires_at !== null && row.expires_at <= now.toISOString()) return undefined;
      // The row just read says whether a touch is due: most requests then write nothing (on SQLite
      // even a no-op UPDATE takes the write lock). The conditional UPDATE still stops two
      // instances from both writing.
      const due = new Date(now.getTime() - TOUCH_EVERY_MS).toISOString();
      if (row.last_used_at === null || row.last_used_at < due) {
        await touchApiKey(storage().db, row.key_id, now.toISOString(), due);
      }
      const tier = (PRICING_TIER_NAMES as readonly string[]).includes(row.tier) ? (row.tier as PricingTier) : 'developer';
      return { row, tier, limits: effectiveLimits(tier, row.limits as LimitOverrides | null) };
    },

    /** Every scope a key may carry (for validation of the create body). */
    scopes: SCOPES,
  };

  function storage(): Storage {
    return deps.storage;
  }
}

export type ApiKeyService = Awaited<ReturnType<typeof createApiKeyService>>;

/** A key as the API shows it: never its hash, active unless revoked or expired. */
function view(row: ApiKeyRow, now: Date): ApiKeyView {
  return {
    key_id: row.key_id,
    org_id: row.org_id,
    display_name: row.display_name,
    tier: row.tier as PricingTier,
    scopes: row.scopes as Scope[],
    key_prefix: row.key_prefix,
    active: row.revoked_at === null && (row.expires_at === null || row.expires_at > now.toISOString()),
    created_at: row.created_at,
    expires_at: row.expires_at,
    revoked_at: row.revoked_at,
    last_used_at: row.last_used_at,
    limits: row.limits as LimitOverrides | null,
  };
}

/** What the create body's schema cannot say: a future expiry, custom limits only for enterprise. */
function validate(input: CreateApiKeyInput, now: Date): void {
  const errors = [];
  if (input.expires_at !== undefined && !(Date.parse(input.expires_at) > now.getTime())) {
    errors.push({ in: 'body', pointer: '/expires_at', reason: 'must be in the future' });
  }
  if (input.limits && (input.tier ?? 'developer') !== 'enterprise') {
    errors.push({ in: 'body', pointer: '/limits', reason: 'custom limits are for the enterprise tier' });
  }
  if (errors.length > 0) throw new WardError('VALIDATION_ERROR', 'The request failed validation.', { errors });
}

