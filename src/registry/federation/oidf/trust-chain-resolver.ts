/**
 * The resolve endpoint's work (OIDF §8.3, §10): from the subject's entity configuration up its
 * `authority_hints` to the trust anchor asked for, then each superior's subordinate statement about
 * the entity below it, validated (./trust-chain-validation.ts), its metadata resolved
 * (./metadata-policy.ts), and signed as a `resolve-response+jwt` by this registry.
 *
 * The trust anchor's keys: this registry's own when it is the anchor; otherwise those the anchor's
 * own entity configuration states, read from the anchor's address (over TLS in production). Bounded:
 * at most {@link MAX_DEPTH} superiors up, {@link HINTS_PER_ENTITY} hints of each, {@link MAX_FETCHES}
 * entity configurations per resolution, each within REGISTRY_FEDERATION_TIMEOUT_MS; the registry's
 * guarded fetch keeps production away from private addresses.
 */
import { RESOLVE_RESPONSE_TYP, entityIdentifier, type EntityMetadata, type ResolveResponseClaims } from '../../../contract/openid-federation.ts';
import type { PublishedJwk } from '../../../core/crypto/key-set.ts';
import { fetchEntityConfiguration, fetchSubordinateStatement } from '../../../client/openid-federation-client.ts';
import { ownEntityId } from './entity-configuration.ts';
import { resolveMetadata } from '../../../client/oidf/metadata-policy.ts';
import { OidfError } from '../../../client/oidf/oidf-error.ts';
import type { OidfDeps } from './oidf-deps.ts';
import { readEntityStatement, validateTrustChain } from '../../../client/oidf/trust-chain-validation.ts';
import { validTrustMarks } from './resolve-trust-marks.ts';
import { chargedFetch, type FetchBudget } from './resolve-budget.ts';

const MAX_DEPTH = 5;
const HINTS_PER_ENTITY = 3;
const MAX_FETCHES = 12;

export type ResolveRequest = { sub: string; trustAnchors: string[]; entityTypes: string[] };

type Configuration = { id: string; jwt: string; hints: string[]; fetchEndpoint: string | undefined; statusEndpoint: string | undefined };
type Walk = { deps: OidfDeps; anchors: ReadonlySet<string>; fetches: number };

/** The entity configuration of `id`, read (not yet verified: the chain's validation does that). */
async function configurationOf(walk: Walk, id: string): Promise<Configuration> {
  walk.fetches += 1;
  if (walk.fetches > MAX_FETCHES) throw new OidfError('invalid_trust_anchor', `No trust chain within ${MAX_FETCHES} entity configurations.`);
  const answer = await fetchEntityConfiguration(id, { fetch: walk.deps.fetch, timeoutMs: walk.deps.config.REGISTRY_FEDERATION_TIMEOUT_MS });
  if (!answer.ok) throw new OidfError('not_found', `The entity configuration of ${id} could not be had: ${answer.message}.`);
  const claims = readEntityStatement(answer.jwt, `the entity configuration of ${id}`);
  if (claims.iss !== id || claims.sub !== id) throw new OidfError('invalid_trust_chain', `The entity configuration at ${id} is about ${claims.sub}.`);
  const federation = claims.metadata?.federation_entity ?? {};
  const fetchEndpoint = typeof federation.federation_fetch_endpoint === 'string' ? federation.federation_fetch_endpoint : undefined;
  const statusEndpoint = typeof federation.federation_trust_mark_status_endpoint === 'string' ? federation.federation_trust_mark_status_endpoint : undefined;
  return { id, jwt: answer.jwt, hints: (claims.authority_hints ?? []).filter((hint) => typeof hint === 'string'), fetchEndpoint, statusEndpoint };
}

/** The configurations from `from` up to a trust anchor asked for, depth first along the hints; undefined: none. */
async function pathToAnchor(walk: Walk, from: Configuration, below: readonly string[]): Promise<Configuration[] | undefined> {
  if (walk.anchors.has(from.id)) return [from];
  if (below.length >= MAX_DEPTH) return undefined;
  for (const hint of from.hints.slice(0, HINTS_PER_ENTITY).map(entityIdentifier)) {
    if (hint === from.id || below.includes(hint)) continue;
    let superior: Configuration;
    try {
      superior = await configurationOf(walk, hint);
    } catch (error) {
      if (error instanceof OidfError && error.code === 'invalid_trust_anchor') throw error;
      continue;
    }
    const rest = await pathToAnchor(walk, superior, [...below, from.id]);
    if (rest) return [from, ...rest];
  }
  return undefined;
}

/** The trust chain as compact JWSs: subject's configuration, each superior's statement, the anchor's configuration. */
async function collectChain(deps: OidfDeps, path: readonly Configuration[]): Promise<string[]> {
  const statements: string[] = [];
  for (let j = 0; j + 1 < path.length; j += 1) {
    const subject = path[j] as Configuration;
    const superior = path[j + 1] as Configuration;
    if (!superior.fetchEndpoint) throw new OidfError('invalid_trust_chain', `${superior.id} publishes no federation_fetch_endpoint.`);
    const answer = await fetchSubordinateStatement(superior.fetchEndpoint, subject.id, { fetch: deps.fetch, timeoutMs: deps.config.REGISTRY_FEDERATION_TIMEOUT_MS });
    if (!answer.ok) throw new OidfError('invalid_trust_chain', `${superior.id} gives no statement about ${subject.id}: ${answer.message}.`);
    statements.push(answer.jwt);
  }
  const anchor = path.at(-1) as Configuration;
  return path.length === 1 ? [anchor.jwt] : [(path[0] as Configuration).jwt, ...statements, anchor.jwt];
}

/**
 * Resolves `request.sub` under the first trust anchor of `request.trustAnchors` a chain reaches, and
 * signs the answer (OIDF §8.3.2): `exp` is the earliest `exp` in the chain; `metadata` keeps only the
 * entity types asked for, when any were.
 */
export async function signResolveResponse(deps: OidfDeps, request: ResolveRequest, budget?: FetchBudget): Promise<string> {
  if (!budget) return resolveAndSign(deps, request);
  // Every fetch this resolution makes (the own chain, the subject's, statements, trust mark statuses) is
  // charged to the caller's budget; one it cannot pay is not made, and the answer is the budget's 429.
  const charged = chargedFetch(deps.fetch, budget);
  let signed: string;
  try {
    signed = await resolveAndSign({ ...deps, fetch: charged.fetch }, request);
  } catch (error) {
    if (charged.spent()) throw budget.refusal();
    throw error;
  }
  if (charged.spent()) throw budget.refusal();
  return signed;
}

async function resolveAndSign(deps: OidfDeps, request: ResolveRequest): Promise<string> {
  const own = ownEntityId(deps);
  const anchors = await anchorsAbove(deps, own, request.trustAnchors);
  if (anchors.length === 0) {
    throw new OidfError('invalid_trust_anchor', `This registry resolves only under itself (${own}) and the trust anchors above it in its own chain.`);
  }
  const walk: Walk = { deps, anchors: new Set(anchors), fetches: 0 };
  const subject = await configurationOf(walk, request.sub);
  const path = await pathToAnchor(walk, subject, []);
  if (!path) throw new OidfError('invalid_trust_anchor', `No trust chain from ${request.sub} reaches ${request.trustAnchors.join(', ')}.`);
  const chain = await collectChain(deps, path);
  const trustAnchor = (path.at(-1) as Configuration).id;
  await deps.signer.refreshIfStale();
  const anchorKeys = trustAnchor === own ? (deps.signer.jwks().keys as PublishedJwk[]) : undefined;
  const now = deps.clock.now();
  const valid = await validateTrustChain(chain, trustAnchor, anchorKeys, now);
  const metadata = onlyTypes(resolveMetadata(valid.statements), request.entityTypes);
  const statusEndpoints = new Map(path.flatMap((entity) => (entity.statusEndpoint ? [[entity.id, entity.statusEndpoint] as const] : [])));
  const trustMarks = await validTrustMarks(deps, { statements: valid.statements, anchorKeys, statusEndpoints }, now);
  const claims: ResolveResponseClaims = {
    iss: own,
    sub: request.sub,
    iat: Math.floor(now.getTime() / 1000),
    exp: valid.exp,
    metadata,
    trust_chain: chain,
    ...(trustMarks.length > 0 ? { trust_marks: trustMarks } : {}),
  };
  return deps.signer.sign(claims, RESOLVE_RESPONSE_TYP);
}

/**
 * The trust anchors asked for that this registry may resolve under: itself, whose keys it holds, and
 * those its own configured chain reaches (its `authority_hints`, from REGISTRY_PARENT_URL, upward).
 * An anchor the caller merely names is refused: its keys would be its own word, and this registry
 * would sign, as itself, whatever a federation of someone's making says.
 */
async function anchorsAbove(deps: OidfDeps, own: string, asked: readonly string[]): Promise<string[]> {
  const allowed = asked.filter((anchor) => anchor === own);
  const others = asked.filter((anchor) => anchor !== own);
  // A registry without a parent has no anchor above it: nothing to fetch to know that.
  if (others.length === 0 || !deps.config.REGISTRY_PARENT_URL) return allowed;
  const walk: Walk = { deps, anchors: new Set(others), fetches: 0 };
  // Whatever fails on the way up (its own configuration unreachable, a superior gone) reaches no anchor:
  // the caller's anchor is then invalid_trust_anchor, never another refusal (issue 41, finding 5).
  const path = await configurationOf(walk, own)
    .then((configuration) => pathToAnchor(walk, configuration, []))
    .catch(() => undefined);
  const reached = path?.at(-1)?.id;
  return reached === undefined ? allowed : [...allowed, reached];
}

function onlyTypes(metadata: EntityMetadata, types: readonly string[]): EntityMetadata {
  if (types.length === 0) return metadata;
  return Object.fromEntries(Object.entries(metadata).filter(([type]) => types.includes(type)));
}
