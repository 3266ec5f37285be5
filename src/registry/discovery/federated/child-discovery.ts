/**
 * One child asked in federated discovery (docs/federation.md), through the federation client: the
 * same filters, the parent's federation token and what is left of its deadline. The child's answer
 * counts only if it is a fresh `ward-discovery+jwt` for the asked capability, signed with the keys this
 * registry delegated to it (the child's row: the `jwks` its OpenID Federation subordinate statement about
 * the child names, oidf/subordinate-statements.ts); each result must be well formed and inside the child's jurisdiction, and
 * its score is held to the range ranking produces. Whatever goes wrong becomes the child's outcome,
 * never a throw.
 */
import { Compile } from 'typebox/compile';
import type { Static } from 'typebox';
import { createFederationClient, failureKind } from '../../../client/federation-client.ts';
import type { Clock } from '../../../core/clock.ts';
import { DISCOVERY_TYP } from '../../../core/crypto/answer-types.ts';
import { offeredKeyMembers, readProtectedHeader, verifiedPayload, type PublishedJwk } from '../../../core/crypto/key-set.ts';
import { DiscoveryResultCheckSchema, type DiscoverQuery } from '../../../contract/schemas/discovery-schemas.ts';
import type { RegistrySigner } from '../../signing-keys/index.ts';
import type { RegistryRow } from '../../federation/index.ts';
import { phiInContent } from '../../storage/phi-boundary.ts';
import type { DiscoveryQuery, DiscoveryResult } from '../discovery-service.ts';
import { SCORE_WEIGHTS } from '../ranking.ts';
import { TRUST_LEVELS } from '../../agents/index.ts';
import { issueFederationToken } from '../../federation/index.ts';

export type FederatedResult = DiscoveryResult & { registry_id: string };

export type ChildOutcome = {
  registry_id: string;
  status: 'ok' | 'timeout' | 'unreachable' | 'error';
  result_count: number;
  /** Why a child's answer, or some of its results, were not used (never a body from the child). */
  error?: string;
  /** The child's own answer was partial: one of its children did not answer. */
  partial?: boolean;
};

/** A child with an address: only those take part in federated discovery. */
export type AskableChild = RegistryRow & { api_base_url: string };
export type Asked = { outcome: ChildOutcome; results: FederatedResult[] };
/** One deadline for the whole fan-out, on the `performance.now()` clock. */
export type Deadline = { at: number; timeoutMs: number };
/** What asking a child needs from the registry. */
export type AskDeps = { signer: RegistrySigner; registryId: string; clock: Clock; fetch?: typeof fetch | undefined };

const MAX_ANSWER_BYTES = 4 * 1024 * 1024;
const SKEW_MS = 60_000;
/**
 * The highest score ranking.ts can give: top trust level, healthy, jurisdiction match, priority 0.
 * A child's score above it could only come from a child putting its agents first.
 */
const MAX_SCORE = Math.max(...Object.keys(TRUST_LEVELS).map(Number)) * SCORE_WEIGHTS.trust_level + 2 * SCORE_WEIGHTS.health + SCORE_WEIGHTS.jurisdiction + 999 / 100;

const checkResult = Compile(DiscoveryResultCheckSchema);

type SignedResults = { results: unknown[]; partial: boolean } | { refused: string };

/** Asks `child` for `query` within what is left of `deadline`, and keeps what of its answer holds. */
export async function askChild(deps: AskDeps, child: AskableChild, query: DiscoveryQuery, deadline: Deadline): Promise<Asked> {
  const failed = (status: ChildOutcome['status'], error: string): Asked => ({ outcome: { registry_id: child.id, status, result_count: 0, error }, results: [] });
  const budgetMs = Math.floor(deadline.at - performance.now());
  if (budgetMs <= 0) return failed('timeout', `not asked before the ${deadline.timeoutMs} ms deadline`);
  const token = await issueFederationToken(deps.signer, { iss: deps.registryId, aud: child.id, now: deps.clock.now() });
  // Each child's request ends at the shared deadline, so the whole fan-out ends there too.
  const client = createFederationClient({ baseUrl: child.api_base_url, fetch: deps.fetch, maxBytes: MAX_ANSWER_BYTES });
  const answer = await client.federatedDiscover(childQuery(child, query), { token, budgetMs });
  if (!answer.ok) {
    const { status } = answer;
    if (status !== null && (status < 200 || status >= 300)) return failed('error', `HTTP ${status}`);
    const kind = failureKind(answer);
    if (kind === 'timeout' || kind === 'cancelled') return failed('timeout', `no answer within the ${deadline.timeoutMs} ms deadline`);
    if (kind === 'too_large') return failed('error', `the answer is larger than ${MAX_ANSWER_BYTES} bytes`);
    // A success status with a body that is not JSON (or none) is read as such below.
    if (kind !== 'answer') return failed('unreachable', 'connection failed');
  }
  const signed = await signedResults(deps, child, query, answer.ok ? answer.text : '', deadline.timeoutMs);
  if ('refused' in signed) return failed('error', signed.refused);
  return checkedResults(child, signed);
}

/** The same filters, as the child's query; a sovereign is asked to federate in turn, one tier at a time. */
function childQuery(child: RegistryRow, query: DiscoveryQuery): Static<typeof DiscoverQuery> {
  return {
    capability: query.capability,
    limit: query.limit,
    ...(query.jurisdiction ? { jurisdiction: query.jurisdiction } : {}),
    // One comma list, as the wire allows (contract §4).
    ...(query.require_features.length > 0 ? { require_features: [query.require_features.join(',')] } : {}),
    ...(query.protocol ? { protocol: query.protocol } : {}),
    ...(query.token_binding ? { token_binding: query.token_binding } : {}),
    ...(query.residency ? { residency: query.residency } : {}),
    ...(query.purpose_of_use ? { purpose_of_use: query.purpose_of_use } : {}),
    ...(child.tier === 'sovereign' ? { federated: true } : {}),
  };
}

/** The results inside the child's signed_response, or why the answer cannot be used. */
async function signedResults(deps: AskDeps, child: RegistryRow, query: DiscoveryQuery, text: string, timeoutMs: number): Promise<SignedResults> {
  let jws: unknown;
  try {
    jws = (JSON.parse(text) as { signed_response?: unknown } | null)?.signed_response;
  } catch {
    return { refused: 'the answer is not JSON' };
  }
  // A child with REGISTRY_SIGN_RESPONSES=false: its results could be anyone's, so they are not used.
  if (typeof jws !== 'string') return { refused: 'the answer was not signed (no signed_response), so it cannot be checked' };
  const header = readProtectedHeader(jws);
  if (header?.typ !== DISCOVERY_TYP) return { refused: `signed_response is not a ${DISCOVERY_TYP}` };
  if (offeredKeyMembers(header).length > 0) return { refused: 'signed_response names its own keys' };
  const signed = (await verifiedPayload(jws, DISCOVERY_TYP, child.jwks.keys as PublishedJwk[], deps.clock.now())) as
    | { query?: { capability?: unknown }; iat?: unknown; results?: unknown; federation?: { partial?: unknown } }
    | undefined;
  if (typeof signed !== 'object' || signed === null) return { refused: 'the answer is not signed by a key delegated to the child' };
  if (signed.query?.capability !== query.capability) return { refused: 'the signed answer is for another query' };
  const nowMs = deps.clock.now().getTime();
  // An answer older than this fan-out (less clock skew) is a replay, not an answer to this question.
  if (typeof signed.iat !== 'number' || !(signed.iat * 1000 > nowMs - timeoutMs - SKEW_MS && signed.iat * 1000 < nowMs + SKEW_MS)) {
    return { refused: 'the signed answer is not fresh (iat)' };
  }
  if (!Array.isArray(signed.results)) return { refused: 'the signed answer has no results' };
  return { results: signed.results, partial: signed.federation?.partial === true };
}

/** Keeps the well-formed results inside the child's jurisdiction, tagged with the registry holding each. */
function checkedResults(child: RegistryRow, signed: { results: unknown[]; partial: boolean }): Asked {
  const ownRegistry = new RegExp(`^registry://${child.jurisdiction.toLowerCase()}/registries/[a-z0-9][a-z0-9-]{0,62}$`);
  const kept: FederatedResult[] = [];
  let invalid = 0;
  let outside = 0;
  let withPhi = 0;
  for (const candidate of signed.results) {
    if (!checkResult.Check(candidate)) {
      invalid += 1;
      continue;
    }
    const result = candidate as DiscoveryResult & { registry_id?: string };
    if (jurisdictionOf(result.agent_id) !== child.jurisdiction) {
      outside += 1;
      continue;
    }
    // A child's answer becomes this registry's answer: it passes the same PHI guard as any record.
    if (phiInContent(result).length > 0) {
      withPhi += 1;
      continue;
    }
    // Only a sovereign holds agents for other registries, and only for registries of its own country.
    const registryId = child.tier === 'sovereign' && result.registry_id !== undefined && ownRegistry.test(result.registry_id) ? result.registry_id : child.id;
    kept.push({ ...result, score: Math.min(MAX_SCORE, Math.max(0, result.score)), registry_id: registryId });
  }
  const notes = [
    ...(invalid > 0 ? [`${invalid} invalid result(s) dropped`] : []),
    ...(outside > 0 ? [`${outside} result(s) outside ${child.jurisdiction} dropped`] : []),
    ...(withPhi > 0 ? [`${withPhi} result(s) carrying protected health information dropped`] : []),
  ];
  const outcome: ChildOutcome = {
    registry_id: child.id,
    status: 'ok',
    result_count: kept.length,
    ...(notes.length > 0 ? { error: notes.join('; ') } : {}),
    ...(signed.partial ? { partial: true } : {}),
  };
  return { outcome, results: kept };
}

function jurisdictionOf(agentId: unknown): string | undefined {
  const match = typeof agentId === 'string' ? /^registry:\/\/([a-z]{2})\/agents\//.exec(agentId) : null;
  return match?.[1]?.toUpperCase();
}
