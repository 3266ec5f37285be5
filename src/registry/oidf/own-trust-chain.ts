/**
 * This registry's own OpenID Federation trust chain to the top of its federation (OIDF §4), for the
 * trust bundles it issues (docs/federation.md, "One chain"): its entity configuration, signed here, then
 * each superior's subordinate statement about the entity below it, read from the superiors' fetch
 * endpoints up the `authority_hints`, and the top entity's configuration. The chain is validated
 * (OIDF §10.2, the top's keys as its own configuration states them: the verifier pins the root's keys
 * itself) before it is served. It is rebuilt when a third of its earliest statement's life has passed,
 * when this registry signs with another key (a rotation), when its Ward grant changed (a superior
 * rotated, or issued a new statement), soon (from {@link UNNAMED_RETRY_MS}) while the superior's
 * statement does not name the key this registry signs with (a rollover under way: the superior takes
 * the new key from the configuration, ./subordinate-rollover.ts), and at most once per
 * {@link RETRY_MS} while a superior fails (a backoff for the key it was tried with: a rotation ends
 * it); a chain that expired is never served. A request waits for a rebuild only when nothing valid is
 * held or the chain held was built for another signing key (bundles signed with the new key would not
 * verify with it); otherwise it is served the chain held while one rebuild runs in the background, so
 * the authentication path (a parent's federation token) never waits for the superiors.
 *
 * Building it is also how this registry hears from its superior: the statement's keys go to the
 * superior view (./superior-view.ts) and a `not_found` about this registry, confirmed by the signed
 * status of the superior's mark (./superior-revocation.ts), is a revocation.
 * Without a parent there is none: the registry is its own trust anchor, whose keys a verifier holds
 * already, and its bundles verify with them alone.
 */
import { decodeJwt } from 'jose';
import { ENTITY_STATEMENT_TYP, type EntityStatementClaims } from '../../contract/openid-federation.ts';
import { fetchEntityConfiguration, fetchSubordinateStatement } from '../../client/openid-federation-client.ts';
import { readEntityStatement, validateTrustChain } from '../../client/oidf/trust-chain-validation.ts';
import { verifiedPayload, type PublishedJwk } from '../../core/crypto/key-set.ts';
import { ownEntityId, parentEntityId, signEntityConfiguration } from './entity-configuration.ts';
import type { OidfDeps } from './oidf-deps.ts';
import { revocationBySuperior } from './superior-revocation.ts';
import type { SuperiorView } from './superior-view.ts';

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
      const { chain, named } = await buildChain(deps, async (superiorRegistryId) => deps.confirmRevoked?.(superiorRegistryId));
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

/**
 * Builds and validates the chain; throws naming what failed. The superiors are read first, so this
 * registry's own configuration is signed with what its superior's statement names now.
 */
async function buildChain(deps: ChainDeps, onRevoked: (superiorRegistryId: string | undefined) => Promise<void>): Promise<Built> {
  const options = { fetch: deps.fetch, timeoutMs: deps.config.REGISTRY_FEDERATION_TIMEOUT_MS };
  const statements: string[] = [];
  const ownId = ownEntityId(deps);
  let subject = ownId;
  const parentId = parentEntityId(deps) as string;
  let hints = [parentId];
  for (let depth = 0; ; depth += 1) {
    const superiorId = hints[0];
    if (!superiorId) throw new Error(`${subject} names no superior`);
    if (depth >= MAX_DEPTH) throw new Error(`no top within ${MAX_DEPTH} superiors`);
    const configuration = await fetchEntityConfiguration(superiorId, options);
    if (!configuration.ok) throw new Error(configuration.message);
    const superior: EntityStatementClaims = readEntityStatement(configuration.jwt, `the entity configuration of ${superiorId}`);
    const fetchEndpoint = superior.metadata?.federation_entity?.federation_fetch_endpoint;
    if (typeof fetchEndpoint !== 'string') throw new Error(`${superiorId} publishes no federation_fetch_endpoint`);
    const statement = await fetchSubordinateStatement(fetchEndpoint, subject, options);
    if (!statement.ok) {
      if (depth === 0 && statement.error === 'not_found') await checkRevocation(deps, superiorId, superior, onRevoked);
      throw new Error(statement.message);
    }
    if (depth === 0) await learnNamedKids(deps, statement.jwt, superiorId, superior);
    statements.push(statement.jwt);
    if (!superior.authority_hints || superior.authority_hints.length === 0) {
      const chain = [await signEntityConfiguration(deps), ...statements, configuration.jwt];
      const valid = await validateTrustChain(chain, superior.sub, undefined, deps.clock.now());
      // The superior's keys as this valid chain states them: the statement above it, or its own configuration at the top.
      const above = valid.statements[2];
      deps.superiorView.superior = { entityId: parentId, keys: (above?.jwks?.keys ?? []) as PublishedJwk[] };
      // Named: the configuration above was signed with the current key, and the statement names it.
      return { chain, named: deps.superiorView.namedKids?.includes(deps.signer.kid) === true };
    }
    subject = superior.sub;
    hints = superior.authority_hints;
  }
}

/**
 * The kids the superior's statement about this registry names, into the superior view, once the
 * statement verifies with the keys the superior's configuration states (the chain is validated after).
 */
async function learnNamedKids(deps: ChainDeps, statement: string, superiorId: string, superior: EntityStatementClaims): Promise<void> {
  const keys = (superior.jwks?.keys ?? []) as PublishedJwk[];
  const claims = (await verifiedPayload(statement, ENTITY_STATEMENT_TYP, keys, deps.clock.now())) as Partial<EntityStatementClaims> | undefined;
  if (claims?.iss !== superiorId || claims.sub !== ownEntityId(deps)) return;
  deps.superiorView.namedKids = (claims.jwks?.keys ?? []).map((key) => key.kid).filter((kid): kid is string => typeof kid === 'string');
}

/** A `not_found` from the superior about this registry: a revocation only once its signed status confirms it. */
async function checkRevocation(
  deps: ChainDeps,
  superiorId: string,
  superior: EntityStatementClaims,
  onRevoked: (superiorRegistryId: string | undefined) => Promise<void>,
): Promise<void> {
  const statusEndpoint = superior.metadata?.federation_entity?.federation_trust_mark_status_endpoint;
  const check = await revocationBySuperior(deps, deps.superiorView, superiorId, statusEndpoint);
  if (!check.revoked) throw new Error(`${superiorId} refused this registry's statement (not_found), which proves nothing: ${check.why}`);
  const registryId = (superior.metadata?.ward_registry as { registry_id?: unknown } | undefined)?.registry_id;
  await onRevoked(typeof registryId === 'string' ? registryId : undefined);
  throw new RevokedBySuperior(`${superiorId} revoked this registry`);
}
