/**
 * This registry's own OpenID Federation trust chain to the top of its federation (OIDF §4), for the
 * trust bundles it issues: validated against the pinned trust anchor before it is served, rebuilt in
 * the background while the chain held still serves. When it is rebuilt, and what building it teaches
 * the registry about its superior: docs/federation.md, "When a child rebuilds its own chain".
 */
import { decodeJwt } from 'jose';
import { ENTITY_STATEMENT_TYP, type EntityStatementClaims } from '../../../contract/openid-federation.ts';
import { fetchEntityConfiguration, fetchSubordinateStatement } from '../../../client/openid-federation-client.ts';
import { readEntityStatement, validateTrustChain, type ValidTrustChain } from '../../../client/oidf/trust-chain-validation.ts';
import { verifiedPayload, type PublishedJwk } from '../../../core/crypto/key-set.ts';
import { ownEntityId, parentEntityId, signEntityConfiguration } from './entity-configuration.ts';
import type { OidfDeps } from './oidf-deps.ts';
import { revocationBySuperior } from './superior-revocation.ts';
import { verifiedSuperiorMark } from './parent-trust-marks.ts';
import type { SuperiorKeys, SuperiorView } from './superior-view.ts';
import { checkTrustAnchorPin, pinOf } from './trust-anchor-pin.ts';

const RETRY_MS = 10_000;
/** The first retry while the superior does not name the current key yet; doubling up to {@link RETRY_MS}. */
const UNNAMED_RETRY_MS = 1000;
const MAX_DEPTH = 5;
const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
/** A hint that the chain may be stale (a superior's token signed by a key it does not name) rebuilds it at most this often. */
const HINT_MS = 10_000;
/** The request bringing such a hint waits this long at most for the rebuild (and a quarter of the federation timeout at most). */
const HINT_WAIT_MS = 1000;

/**
 * Why the chain is asked for, beyond serving it: `start`, a warm-up once the registry listens (built in
 * the background, its failure not backing off the first request); `superior-key-unknown`, a token from
 * the superior signed by a key the chain held does not name (the superior rotated: rebuilt at most once
 * per {@link HINT_MS}, the request that started it waiting for it up to {@link HINT_WAIT_MS}; others
 * are served the chain held).
 */
export type ChainRequest = { because?: 'start' | 'superior-key-unknown' };

type Log = (message: string, error?: unknown) => void;

type ChainDeps = Pick<OidfDeps, 'config' | 'clock' | 'signer' | 'registryId' | 'baseUrl' | 'heldTrustMarks' | 'fetch'> & { superiorView: SuperiorView };
type Held = { chain: string[]; iat: number; exp: number; kid: string; grant: string; named: boolean };
type Built = { chain: string[]; named: boolean };

/** Thrown once the superior's revocation of this registry is confirmed: there is no chain to build. */
class RevokedBySuperior extends Error {}

/** Returns a function answering the chain now (undefined when none can be had); it never throws. */
export function createOwnTrustChain(
  deps: ChainDeps & {
    /** Changes whenever the Ward grant from the parent does (a superior's rotation or new statement): the chain is rebuilt then too. */
    grantVersion(): string;
    /** Set once this registry's parent revoked it (either chain may have confirmed it): no chain then. */
    revoked?(): unknown;
    /** Records a revocation confirmed through OIDF, for every instance and a restart (the parent link's state). */
    confirmRevoked?(superiorRegistryId: string | undefined): Promise<void>;
  },
  log: (message: string, error?: unknown) => void = () => {},
): (request?: ChainRequest) => Promise<string[] | undefined> {
  let held: Held | undefined;
  let retryAt = 0;
  /** The signing key the backoff is for: once this registry signs with another (a rotation), it no longer holds. */
  let retryKid: string | undefined;
  let unnamedRetries = 0;
  let hintedAt = Number.NEGATIVE_INFINITY;
  let inFlight: Promise<void> | undefined;
  let warming: Promise<void> | undefined;

  const due = (nowMs: number) =>
    !held || !held.named || held.kid !== deps.signer.kid || held.grant !== deps.grantVersion() || nowMs >= (held.iat + (held.exp - held.iat) / 3) * 1000;

  async function refresh(warmUp: boolean): Promise<void> {
    const kid = deps.signer.kid;
    try {
      const grant = deps.grantVersion();
      const { chain, named } = await buildChain(deps, async (superiorRegistryId) => deps.confirmRevoked?.(superiorRegistryId), log);
      const claims = chain.map((jwt) => decodeJwt(jwt));
      const iat = Math.max(...claims.map((c) => c.iat as number));
      // A rollover under way: ask again soon, then less often while the superior does not take the key (counted per key).
      unnamedRetries = named ? 0 : (held?.kid === kid ? unnamedRetries : 0) + 1;
      held = { chain, iat, exp: Math.min(...claims.map((c) => c.exp as number)), kid, grant, named };
      retryAt = named ? 0 : deps.clock.now().getTime() + Math.min(RETRY_MS, UNNAMED_RETRY_MS * 2 ** (unnamedRetries - 1));
      retryKid = kid;
    } catch (error) {
      // Nobody waited for a warm-up: the first request tries again rather than finding a backoff.
      if (!warmUp || error instanceof RevokedBySuperior) {
        retryAt = deps.clock.now().getTime() + RETRY_MS;
        retryKid = kid;
      }
      if (error instanceof RevokedBySuperior) {
        held = undefined;
        log(`${error.message}: confirmed by the signed status of its trust mark`);
      } else log('building the OpenID Federation trust chain failed', error);
    }
  }

  /** One rebuild at a time (single flight): a request meanwhile joins it or is served the chain held. */
  const start = (warmUp = false) =>
    (inFlight ??= refresh(warmUp).finally(() => {
      inFlight = undefined;
      warming = undefined;
    }));
  const valid = (nowMs: number) => held !== undefined && held.exp * 1000 > nowMs;
  // A chain held for this key serves while the next is built; one for another key (a rotation) is waited past.
  const servable = (nowMs: number) => valid(nowMs) && held?.kid === deps.signer.kid;

  return async (request = {}) => {
    if (!parentEntityId(deps) || deps.revoked?.()) return undefined;
    if (request.because === 'start') {
      if (!held && !inFlight) warming = start(true);
      return undefined;
    }
    // A warm-up under way is joined; had it failed, the rules below try again at once.
    if (warming) await warming;
    const nowMs = deps.clock.now().getTime();
    // A hint is rate-limited on its own, and passes a backoff: a rebuild that raced the superior's rotation may have left one.
    const hinted = request.because === 'superior-key-unknown' && nowMs - hintedAt >= HINT_MS;
    const backingOff = !hinted && nowMs < retryAt && retryKid === deps.signer.kid;
    if ((due(nowMs) || hinted) && !backingOff) {
      if (hinted) hintedAt = nowMs;
      // A rebuild under way may have read the superior before what the hint reveals (its rotation): one more after it.
      const building = hinted && inFlight ? inFlight.then(() => start()) : start();
      if (!servable(nowMs)) await building;
      else if (hinted) await Promise.race([building, delay(Math.min(HINT_WAIT_MS, deps.config.REGISTRY_FEDERATION_TIMEOUT_MS / 4))]);
    }
    return valid(deps.clock.now().getTime()) ? held?.chain : undefined;
  };
}

/** A superior's entity configuration as fetched, and its claims (read, not verified). */
type Fetched = { id: string; jwt: string; claims: EntityStatementClaims };
/** The statements up from `subject` to the top, or the first superior's refusal of `subject` (`not_found`). */
type Climb = { statements: string[]; first: Fetched; top: Fetched } | { refusedBy: Fetched };

/**
 * Reads the superiors' statements from `subject` up the `authority_hints`, starting at `superiorId`, to
 * an entity that names none (the top); throws naming what failed, except that the first superior
 * answering `not_found` about `subject` is returned as a refusal.
 */
async function climb(deps: ChainDeps, subject: string, superiorId: string | undefined): Promise<Climb> {
  const options = { fetch: deps.fetch, timeoutMs: deps.config.REGISTRY_FEDERATION_TIMEOUT_MS };
  const statements: string[] = [];
  let first: Fetched | undefined;
  for (let depth = 0, next = superiorId; ; depth += 1) {
    if (!next) throw new Error(`${subject} names no superior`);
    if (depth >= MAX_DEPTH) throw new Error(`no top within ${MAX_DEPTH} superiors`);
    const configuration = await fetchEntityConfiguration(next, options);
    if (!configuration.ok) throw new Error(configuration.message);
    const superior: Fetched = { id: next, jwt: configuration.jwt, claims: readEntityStatement(configuration.jwt, `the entity configuration of ${next}`) };
    const fetchEndpoint = superior.claims.metadata?.federation_entity?.federation_fetch_endpoint;
    if (typeof fetchEndpoint !== 'string') throw new Error(`${next} publishes no federation_fetch_endpoint`);
    const statement = await fetchSubordinateStatement(fetchEndpoint, subject, options);
    if (!statement.ok) {
      if (depth === 0 && statement.error === 'not_found') return { refusedBy: superior };
      throw new Error(statement.message);
    }
    first ??= superior;
    statements.push(statement.jwt);
    if (!superior.claims.authority_hints || superior.claims.authority_hints.length === 0) return { statements, first, top: superior };
    subject = superior.claims.sub;
    next = superior.claims.authority_hints[0];
  }
}

/**
 * Builds and validates the chain; throws naming what failed. The superiors are read first, so this
 * registry's own configuration is signed with what its superior's statement names now.
 */
async function buildChain(deps: ChainDeps, onRevoked: (superiorRegistryId: string | undefined) => Promise<void>, log: Log): Promise<Built> {
  const parentId = parentEntityId(deps) as string;
  const climbed = await climb(deps, ownEntityId(deps), parentId);
  if ('refusedBy' in climbed) return checkRevocation(deps, climbed.refusedBy, onRevoked);
  const { statements, first, top } = climbed;
  // Before anything is taken from this round: a top that is not the pinned anchor is no chain at all.
  await checkTrustAnchorPin(deps.superiorView.anchor, top, deps.clock.now());
  await learnNamedKids(deps, statements[0] as string, first);
  const chain = [await signEntityConfiguration(deps), ...statements, top.jwt];
  const valid = await validateTrustChain(chain, top.claims.sub, undefined, deps.clock.now());
  await learnFromValidChain(deps, valid, first, log);
  // Named: the configuration above was signed with the current key, and the statement names it.
  return { chain, named: deps.superiorView.namedKids?.includes(deps.signer.kid) === true };
}

/**
 * What a valid chain states about the superior, stored for every instance (./superior-view.ts): its keys
 * (the statement above it, or its own configuration at the top), its status endpoint (from its
 * configuration, once that verifies with those keys), the kids it names for this registry, the
 * marks this registry's configuration carried that verify with those keys, and the top's keys (the pin).
 */
async function learnFromValidChain(deps: ChainDeps, valid: ValidTrustChain, superior: Fetched, log: Log): Promise<void> {
  const now = deps.clock.now();
  const keys = (valid.statements[2]?.jwks?.keys ?? []) as PublishedJwk[];
  const configuration = (await verifiedPayload(superior.jwt, ENTITY_STATEMENT_TYP, keys, now)) as Partial<EntityStatementClaims> | undefined;
  const endpoint = configuration?.iss === superior.id ? configuration.metadata?.federation_entity?.federation_trust_mark_status_endpoint : undefined;
  const known: SuperiorKeys = { entityId: superior.id, keys, statusEndpoint: typeof endpoint === 'string' ? endpoint : undefined };
  const marks: Record<string, string> = {};
  for (const entry of valid.statements[0]?.trust_marks ?? []) {
    if (await verifiedSuperiorMark(entry.trust_mark, entry.trust_mark_type, known, deps)) marks[entry.trust_mark_type] = entry.trust_mark;
  }
  const kids = deps.superiorView.namedKids;
  await deps.superiorView
    .learn({ superior: known, marks, anchor: pinOf(valid.statements[valid.statements.length - 1] as EntityStatementClaims), ...(kids ? { namedKids: kids } : {}) })
    .catch((error: unknown) => log('storing what the superior stated failed', error));
}

/**
 * The kids the superior's statement about this registry names, for signing this round's configuration,
 * once the statement verifies with the keys the superior's configuration states (the chain is validated after).
 */
async function learnNamedKids(deps: ChainDeps, statement: string, superior: Fetched): Promise<void> {
  const keys = (superior.claims.jwks?.keys ?? []) as PublishedJwk[];
  const claims = (await verifiedPayload(statement, ENTITY_STATEMENT_TYP, keys, deps.clock.now())) as Partial<EntityStatementClaims> | undefined;
  if (claims?.iss !== superior.id || claims.sub !== ownEntityId(deps)) return;
  deps.superiorView.noteNamedKids((claims.jwks?.keys ?? []).map((key) => key.kid).filter((kid): kid is string => typeof kid === 'string'));
}

/**
 * A `not_found` from the superior about this registry: a revocation only while the superior itself still
 * stands (its own chain to the top is read and validates in this same round, or it is the top; either
 * way that top must be the pinned trust anchor, docs/decisions.md 101), and once
 * the signed status of its mark confirms it (docs/decisions.md 92, 97). A superior its own superior
 * refuses answers `not_found` and `revoked` about everything below it: that is its revocation, not this
 * registry's, whose chain simply cannot be built now.
 */
async function checkRevocation(deps: ChainDeps, superior: Fetched, onRevoked: (superiorRegistryId: string | undefined) => Promise<void>): Promise<never> {
  const refused = `${superior.id} refused this registry's statement (not_found)`;
  const hints = superior.claims.authority_hints ?? [];
  if (hints.length > 0) {
    const above = await climb(deps, superior.id, hints[0]).catch((error: unknown) => {
      throw new Error(`${refused}, but its own chain cannot be built, so it is no revocation of this registry: ${error instanceof Error ? error.message : String(error)}`);
    });
    if ('refusedBy' in above) throw new Error(`${refused}, but ${above.refusedBy.id} refuses ${superior.id} itself: no revocation of this registry`);
    await pinned(deps, above.top, refused);
    await validateTrustChain([superior.jwt, ...above.statements, above.top.jwt], above.top.claims.sub, undefined, deps.clock.now()).catch((error: unknown) => {
      throw new Error(`${refused}, but its own chain does not validate, so it is no revocation of this registry: ${error instanceof Error ? error.message : String(error)}`);
    });
  } else await pinned(deps, superior, refused);
  const check = await revocationBySuperior(deps, deps.superiorView, superior.id, deps.superiorView.superior?.statusEndpoint);
  if (!check.revoked) throw new Error(`${refused}, which proves nothing: ${check.why}`);
  const registryId = (superior.claims.metadata?.ward_registry as { registry_id?: unknown } | undefined)?.registry_id;
  await onRevoked(typeof registryId === 'string' ? registryId : undefined);
  throw new RevokedBySuperior(`${superior.id} revoked this registry`);
}

/** The pin checked for the top a refusal's chain ends at: a refusal from under another top proves nothing. */
async function pinned(deps: ChainDeps, top: Fetched, refused: string): Promise<void> {
  await checkTrustAnchorPin(deps.superiorView.anchor, top, deps.clock.now()).catch((error: unknown) => {
    throw new Error(`${refused}, but ${error instanceof Error ? error.message : String(error)}: no revocation of this registry`);
  });
}
