/**
 * The child registries a registry delegates to (contract §5, docs/federation.md): registration under
 * the tier rules, listing, revocation, and the signed delegation statements and status tokens that
 * let a verifier holding only the root's keys check a chain. Keys of a child change only through
 * an entity configuration signed by a key the parent already holds for it (rollover, not takeover).
 */
import { PrivateAddressError } from '../../core/net/guarded-fetch.ts';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { isDeepStrictEqual } from 'node:util';
import type { CallContext } from '../../core/call-context.ts';
import type { Clock } from '../../core/clock.ts';
import type { Config } from '../../core/config.ts';
import type { RegistrySigner } from '../../core/crypto/registry-signer.ts';
import { WardError } from '../../core/errors.ts';
import { registryUri } from '../../core/ids.ts';
import { normaliseJurisdiction } from '../../core/jurisdictions.ts';
import type { Storage } from '../../core/storage/database.ts';
import {
  findActiveSovereign,
  findRegistry,
  insertRegistry,
  listRegistries,
  updateRegistry,
  type RegistryFilter,
  type RegistryRow,
} from '../../core/storage/stores/registry-store.ts';
import { runWrite, type WriteUnit } from '../../core/storage/write-unit.ts';
import { BodyTooLargeError, readBodyCapped } from '../../core/http/read-capped.ts';
import { decodeCursor, encodeCursor } from '../http/cursor.ts';
import { verifiedPayload } from '../trust/key-set.ts';
import { childConstraints, hasPrivateKeyMaterial, signDelegationStatement, signStatusToken, unreadableWindowMember, type PublishedJwk } from './delegation-statement.ts';

export const ENTITY_CONFIGURATION_TYP = 'ward-entity+jwt';
export type ChildTier = RegistryRow['tier'];
export type AnchorRole = 'root' | 'sovereign_registry' | 'organisation' | 'agent';

export type TrustAnchorInput = {
  key_id: string;
  alg: 'RS256' | 'ES256' | 'EdDSA';
  jwks_uri: string;
  thumbprint_sha256: string;
  role?: AnchorRole;
  not_before?: string;
  not_after?: string | null;
};

export type RegisterRegistryInput = {
  display_name: string;
  jurisdiction: string;
  tier: ChildTier;
  trust_anchors: TrustAnchorInput[];
  api_base_url?: string;
  /** The last part of the child's URI; defaults to a slug of display_name. */
  name?: string;
  /** The child's public keys; without them each anchor's jwks_uri is fetched. */
  jwks?: { keys: Record<string, unknown>[] };
};

/** A registry record as the API returns it. */
export type RegistryRecord = {
  registry_id: string;
  name: string;
  display_name: string;
  jurisdiction: string;
  tier: ChildTier;
  api_base_url: string | null;
  trust_anchors: Required<TrustAnchorInput>[];
  jwks: { keys: Record<string, unknown>[] };
  status: 'active' | 'revoked';
  revoked_at: string | null;
  revocation_reason: string | null;
  parent_id: string;
  delegation_chain: string[];
  version: number;
  created_at: string;
  updated_at: string;
};

export type PreparedRegistry = {
  input: RegisterRegistryInput;
  jurisdiction: string;
  name: string;
  id: string;
  anchors: Required<TrustAnchorInput>[];
  jwks: { keys: Record<string, unknown>[] };
};

/** What a child receives from `GET /v1/federation/fetch`. */
export type DelegationGrant = {
  sub: string;
  delegation_chain: string[];
  statements: string[];
  issuer_jwks: { keys: JWK[] };
  expires_at: string;
};

const ROLE_OF: Record<ChildTier, AnchorRole> = { sovereign: 'sovereign_registry', organisational: 'organisation' };
const MAX_JWKS_BYTES = 64 * 1024;

export type ChildRegistriesDeps = {
  config: Config;
  storage: Storage;
  clock: Clock;
  signer: RegistrySigner;
  registryId: string;
  trustChain(): { delegationChain: string[]; statements: string[] };
  fetch?: typeof fetch;
};

export function createChildRegistries(deps: ChildRegistriesDeps) {
  const { config, storage, signer, registryId } = deps;
  const fetchImpl = deps.fetch ?? fetch;

  function record(row: RegistryRow): RegistryRecord {
    return {
      registry_id: row.id,
      name: row.name,
      display_name: row.display_name,
      jurisdiction: row.jurisdiction,
      tier: row.tier,
      api_base_url: row.api_base_url,
      trust_anchors: row.trust_anchors as Required<TrustAnchorInput>[],
      jwks: row.jwks,
      status: row.status,
      revoked_at: row.revoked_at,
      revocation_reason: row.revocation_reason,
      parent_id: registryId,
      delegation_chain: [...deps.trustChain().delegationChain, row.id],
      version: row.version,
      created_at: row.created_at,
      updated_at: row.updated_at,
    };
  }

  /** Contract §5: root → sovereign (one per country), sovereign → organisational of its country, organisational → none. */
  function checkTiers(input: RegisterRegistryInput, jurisdiction: string): void {
    const own = config.REGISTRY_TIER;
    const details = { tier: own, child_tier: input.tier, jurisdiction };
    if (own === 'organisational') throw new WardError('TIER_VIOLATION', 'An organisational registry accepts no child registries.', details);
    if (own === 'root' && input.tier !== 'sovereign') throw new WardError('TIER_VIOLATION', 'The root accepts only sovereign registries.', details);
    if (own === 'sovereign') {
      if (input.tier !== 'organisational') throw new WardError('TIER_VIOLATION', 'A sovereign registry accepts only organisational registries.', details);
      if (jurisdiction !== config.REGISTRY_JURISDICTION) {
        throw new WardError('TIER_VIOLATION', `A sovereign registry accepts organisational registries of its own jurisdiction (${config.REGISTRY_JURISDICTION}) only.`, details);
      }
    }
  }

  /** The child's public keys, each pinned by an anchor's thumbprint; from the body or the anchors' jwks_uri. */
  async function resolveKeys(input: RegisterRegistryInput, now: Date): Promise<{ anchors: Required<TrustAnchorInput>[]; jwks: { keys: Record<string, unknown>[] } }> {
    const candidates = new Map<string, Record<string, unknown>[]>();
    // One deadline for every fetch of this registration, however many anchors it names.
    const deadline = AbortSignal.timeout(config.REGISTRY_FEDERATION_TIMEOUT_MS);
    const errors: Array<{ in: string; pointer: string; reason: string }> = [];
    const keysAt = async (uri: string) => {
      if (input.jwks) return input.jwks.keys;
      let keys = candidates.get(uri);
      if (!keys) {
        keys = await fetchJwks(uri, deadline);
        candidates.set(uri, keys);
      }
      return keys;
    };
    const anchors: Required<TrustAnchorInput>[] = [];
    const keys: Record<string, unknown>[] = [];
    for (const [index, anchor] of input.trust_anchors.entries()) {
      const pointer = `/trust_anchors/${index}`;
      let match: Record<string, unknown> | undefined;
      for (const key of await keysAt(anchor.jwks_uri)) {
        if (hasPrivateKeyMaterial(key)) {
          errors.push({ in: 'body', pointer: input.jwks ? '/jwks' : `${pointer}/jwks_uri`, reason: 'keys must be public keys' });
          break;
        }
        const thumbprint = await calculateJwkThumbprint(key as JWK, 'sha256').catch(() => undefined);
        if (thumbprint === anchor.thumbprint_sha256) match = key;
      }
      if (!match) {
        errors.push({ in: 'body', pointer: `${pointer}/thumbprint_sha256`, reason: 'no public key with this RFC 7638 SHA-256 thumbprint' });
        continue;
      }
      if (typeof match.alg === 'string' && match.alg !== anchor.alg) errors.push({ in: 'body', pointer: `${pointer}/alg`, reason: "does not match the key's alg" });
      // The child signs with its key's own kid: a different key_id would never match its signatures.
      if (typeof match.kid === 'string' && match.kid !== anchor.key_id) errors.push({ in: 'body', pointer: `${pointer}/key_id`, reason: "does not match the key's kid" });
      const notBefore = anchor.not_before ? new Date(anchor.not_before).toISOString() : now.toISOString();
      const notAfter = anchor.not_after ? new Date(anchor.not_after).toISOString() : null;
      if (notAfter !== null && notAfter <= notBefore) errors.push({ in: 'body', pointer: `${pointer}/not_after`, reason: 'must be after not_before' });
      const { kty, crv, x, y, n, e } = match;
      keys.push(strip({ kty, crv, x, y, n, e, kid: anchor.key_id, alg: anchor.alg, use: 'sig', not_before: notBefore, not_after: notAfter }));
      anchors.push({ ...anchor, role: anchor.role ?? ROLE_OF[input.tier], not_before: notBefore, not_after: notAfter });
    }
    if (errors.length > 0) throw new WardError('VALIDATION_ERROR', 'The request failed validation.', { errors });
    return { anchors, jwks: { keys } };
  }

  async function fetchJwks(uri: string, signal: AbortSignal): Promise<Record<string, unknown>[]> {
    const invalid = () => new WardError('VALIDATION_ERROR', 'The request failed validation.', { errors: [{ in: 'body', pointer: '/trust_anchors', reason: `${uri} did not answer a JWKS` }] });
    let text: string;
    try {
      const response = await fetchImpl(uri, { signal, redirect: 'error', headers: { accept: 'application/json' } });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      text = await readBodyCapped(response, MAX_JWKS_BYTES);
    } catch (error) {
      if (error instanceof BodyTooLargeError) throw invalid();
      if (error instanceof PrivateAddressError) {
        throw new WardError('VALIDATION_ERROR', 'The request failed validation.', {
          errors: [{ in: 'body', pointer: '/trust_anchors', reason: `${uri}: private, loopback and link-local addresses are refused in production (REGISTRY_ALLOW_PRIVATE_ENDPOINTS)` }],
        });
      }
      // The reason stays generic: the answer of an arbitrary URL is not echoed back.
      throw new WardError('DEPENDENCY_UNAVAILABLE', "The child's JWKS could not be fetched.", { url: uri });
    }
    try {
      const parsed = JSON.parse(text) as { keys?: unknown };
      if (!Array.isArray(parsed.keys)) throw invalid();
      return parsed.keys.filter((key): key is Record<string, unknown> => typeof key === 'object' && key !== null);
    } catch {
      throw invalid();
    }
  }

  async function find(id: string): Promise<RegistryRow> {
    const row = await findRegistry(storage.db, id);
    if (!row) throw new WardError('REGISTRY_NOT_FOUND', undefined, { registry_id: id });
    return row;
  }

  return {
    /**
     * Checks a registration and resolves the child's keys, before any transaction: fetching keys
     * may take up to REGISTRY_FEDERATION_TIMEOUT_MS, and no write lock is held meanwhile.
     */
    async prepare(ctx: CallContext, input: RegisterRegistryInput): Promise<PreparedRegistry> {
      const now = ctx.clock.now();
      const jurisdiction = normaliseJurisdiction(input.jurisdiction);
      if (!jurisdiction) {
        throw new WardError('VALIDATION_ERROR', 'The request failed validation.', { errors: [{ in: 'body', pointer: '/jurisdiction', reason: 'must be an assigned ISO 3166-1 alpha-2 code' }] });
      }
      checkTiers(input, jurisdiction);
      const name = input.name ?? slug(input.display_name);
      if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(name)) {
        throw new WardError('VALIDATION_ERROR', 'The request failed validation.', { errors: [{ in: 'body', pointer: '/name', reason: 'give a name of lower-case letters, digits and hyphens' }] });
      }
      const { anchors, jwks } = await resolveKeys(input, now);
      return { input, jurisdiction, name, id: registryUri(jurisdiction, name), anchors, jwks };
    },

    /** Registers a prepared child; conflicts are checked inside the write unit, so two racing registrations cannot both win. */
    async register(unit: WriteUnit, ctx: CallContext, prepared: PreparedRegistry): Promise<RegistryRecord> {
      const { input, jurisdiction, name, id, anchors, jwks } = prepared;
      // A child named like this registry or one above it would speak as that registry.
      if (deps.trustChain().delegationChain.includes(id) || (await findRegistry(unit.tx, id))) {
        throw new WardError('REGISTRY_CONFLICT', 'A registry with this URI exists.', { registry_id: id });
      }
      if (input.tier === 'sovereign') {
        const existing = await findActiveSovereign(unit.tx, jurisdiction);
        if (existing) throw new WardError('REGISTRY_CONFLICT', `${jurisdiction} already has a sovereign registry.`, { registry_id: existing.id, jurisdiction });
      }
      const at = ctx.clock.now().toISOString();
      const row: RegistryRow = {
        id,
        name,
        display_name: input.display_name,
        jurisdiction,
        tier: input.tier,
        api_base_url: input.api_base_url ? input.api_base_url.replace(/\/+$/, '') : null,
        trust_anchors: anchors,
        jwks,
        status: 'active',
        revoked_at: null,
        revocation_reason: null,
        version: 1,
        entity_iat: 0,
        created_at: at,
        updated_at: at,
      };
      await insertRegistry(unit.tx, row);
      unit.emit({ type: 'registry.registered', subject: id, occurred_at: at, data: { registry_id: id, tier: row.tier, jurisdiction, display_name: row.display_name, parent_id: registryId } });
      return record(row);
    },

    async get(id: string): Promise<RegistryRecord> {
      return record(await find(id));
    },

    async list(filter: RegistryFilter, page: { cursor?: string; limit: number }) {
      const afterId = page.cursor === undefined ? undefined : decodeCursor(page.cursor, 'registries');
      const rows = await listRegistries(storage.db, filter, { limit: page.limit + 1, ...(afterId ? { afterId } : {}) });
      const shown = rows.slice(0, page.limit);
      const last = shown.at(-1);
      return { registries: shown.map(record), next_cursor: rows.length > page.limit && last ? encodeCursor('registries', last.id) : null };
    },

    /** Every active child (for federated discovery), read a page at a time in id order. */
    async activeChildren(): Promise<RegistryRow[]> {
      const pageSize = 500;
      const rows: RegistryRow[] = [];
      for (let afterId: string | undefined; ; ) {
        const page = await listRegistries(storage.db, { status: 'active' }, { limit: pageSize, ...(afterId ? { afterId } : {}) });
        rows.push(...page);
        if (page.length < pageSize) return rows;
        afterId = page.at(-1)?.id;
      }
    },

    async revoke(unit: WriteUnit, ctx: CallContext, id: string, reason: string): Promise<RegistryRecord> {
      const row = await findRegistry(unit.tx, id);
      if (!row) throw new WardError('REGISTRY_NOT_FOUND', undefined, { registry_id: id });
      if (row.status === 'revoked') throw new WardError('INVALID_STATE_TRANSITION', 'The registry is already revoked.', { registry_id: id, status: row.status });
      const at = ctx.clock.now().toISOString();
      const next: RegistryRow = { ...row, status: 'revoked', revoked_at: at, revocation_reason: reason, version: row.version + 1, updated_at: at };
      if (!(await updateRegistry(unit.tx, next, row.version))) throw new WardError('VERSION_CONFLICT', undefined, { registry_id: id });
      unit.emit({ type: 'registry.revoked', subject: id, occurred_at: at, data: { registry_id: id, reason, parent_id: registryId } });
      return record(next);
    },

    /**
     * A fresh delegation statement for an active child, with this registry's own chain above it. An
     * entity configuration presented by the child (signed by a key this registry holds for it) first
     * replaces the child's keys: that is how a child's key rotation reaches its statements.
     */
    async grant(id: string, entityConfiguration?: string): Promise<DelegationGrant> {
      let row = await find(id);
      if (row.status === 'revoked') throw new WardError('REGISTRY_REVOKED', undefined, { registry_id: id, reason: row.revocation_reason });
      const now = deps.clock.now();
      if (entityConfiguration) {
        // Signatures by several of the child's keys (space-separated); one by a key we hold is enough.
        // Only a change of keys is written: a replayed header with the same keys changes nothing, and
        // one with older keys is older than the iat recorded with the change.
        for (const jws of entityConfiguration.split(' ').slice(0, 10)) {
          const update = await rolledOverKeys(row, jws, now);
          if (!update) continue;
          if (!isDeepStrictEqual(update.keys, row.jwks.keys)) row = await replaceKeys(row, update, now);
          break;
        }
      }
      const statement = await signDelegationStatement(signer, {
        iss: registryId,
        sub: row.id,
        tier: row.tier,
        jurisdiction: row.jurisdiction,
        jwks: row.jwks,
        api_base_url: row.api_base_url,
        constraints: childConstraints(config.REGISTRY_TIER, row.jurisdiction),
        now,
        ttlSeconds: config.REGISTRY_DELEGATION_TTL_SECONDS,
      });
      const own = deps.trustChain();
      return {
        sub: row.id,
        delegation_chain: [...own.delegationChain, row.id],
        statements: [...own.statements, statement],
        issuer_jwks: signer.jwks(),
        expires_at: new Date(now.getTime() + config.REGISTRY_DELEGATION_TTL_SECONDS * 1000).toISOString(),
      };
    },

    /** Online status of a child, for verifiers (docs/federation.md "Status tokens"). */
    async status(id: string) {
      const row = await find(id);
      const status = row.status;
      return {
        sub: row.id,
        status,
        revoked_at: row.revoked_at,
        reason: row.revocation_reason,
        status_token: await signStatusToken(signer, { iss: registryId, sub: row.id, status, revoked_at: row.revoked_at }, deps.clock.now()),
      };
    },
  };

  /**
   * The keys and iat of an entity configuration, if a key we hold for the child signed it and it is
   * newer than the last one accepted (an older or replayed one could roll the keys back); else undefined.
   */
  async function rolledOverKeys(row: RegistryRow, jws: string, now: Date): Promise<{ keys: Record<string, unknown>[]; iat: number } | undefined> {
    const payload = await verifiedPayload(jws, ENTITY_CONFIGURATION_TYP, row.jwks.keys as PublishedJwk[], now);
    if (typeof payload !== 'object' || payload === null) return undefined;
    const claims = payload as { iss?: unknown; sub?: unknown; iat?: unknown; iat_ms?: unknown; exp?: unknown; jwks?: { keys?: unknown } };
    const nowS = now.getTime() / 1000;
    if (claims.iss !== row.id || claims.sub !== row.id) return undefined;
    if (typeof claims.iat !== 'number' || typeof claims.exp !== 'number') return undefined;
    if (claims.iat > nowS + 60 || claims.exp < nowS || claims.exp - claims.iat > 300) return undefined;
    // Ordered to the millisecond: two rotations within a second are still told apart.
    const issuedMs = typeof claims.iat_ms === 'number' && Math.floor(claims.iat_ms / 1000) === claims.iat ? claims.iat_ms : claims.iat * 1000;
    if (issuedMs <= row.entity_iat) return undefined;
    const keys = claims.jwks?.keys;
    if (!Array.isArray(keys) || keys.length === 0 || keys.length > 10) return undefined;
    // An unreadable window would make every statement about the child malformed.
    if (keys.some((key) => typeof key !== 'object' || key === null || hasPrivateKeyMaterial(key) || unreadableWindowMember(key) !== undefined)) return undefined;
    return { keys: keepEarlierEnds(keys as Record<string, unknown>[], row.jwks.keys), iat: issuedMs };
  }

  /** Replaces the child's keys unless another instance changed the record since it was read. */
  async function replaceKeys(row: RegistryRow, update: { keys: Record<string, unknown>[]; iat: number }, now: Date): Promise<RegistryRow> {
    const at = now.toISOString();
    const { result } = await runWrite(storage, async (unit) => {
      const current = await findRegistry(unit.tx, row.id);
      if (!current || current.status !== 'active') throw new WardError('REGISTRY_REVOKED', undefined, { registry_id: row.id });
      if (current.version !== row.version || update.iat <= current.entity_iat) return current;
      const next: RegistryRow = { ...current, jwks: { keys: update.keys }, entity_iat: update.iat, version: current.version + 1, updated_at: at };
      if (!(await updateRegistry(unit.tx, next, current.version))) return current;
      // A child's rollover is a key rotation of that registry, as this registry records it.
      unit.emit({ type: 'trust.key_rotated', subject: row.id, occurred_at: at, data: { registry_id: row.id, kids: update.keys.map((key) => key.kid ?? null), source: 'entity_configuration' } });
      return next;
    });
    return result;
  }
}

/**
 * A child may shorten a key's life but never lengthen it or make it open again: once this registry
 * holds an end for a key, the earlier end stands.
 */
function keepEarlierEnds(keys: Record<string, unknown>[], held: Record<string, unknown>[]): Record<string, unknown>[] {
  return keys.map((key) => {
    const before = held.find((candidate) => candidate.kid === key.kid)?.not_after;
    if (typeof before !== 'string') return key;
    const after = typeof key.not_after === 'string' ? key.not_after : undefined;
    return { ...key, not_after: after !== undefined && Date.parse(after) < Date.parse(before) ? after : before };
  });
}

export type ChildRegistries = ReturnType<typeof createChildRegistries>;

function strip(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
}

function slug(displayName: string): string {
  return displayName
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
}
