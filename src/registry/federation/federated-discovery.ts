/**
 * Federated discovery (contract §5, docs/federation.md): a root or sovereign registry answers from
 * its own agents and asks each active child registry that has an address too, at most eight at a
 * time, all within one deadline. Each child is told how long it will be waited for, so a sovereign
 * cuts its own fan-out short and still answers with its own agents. A child's answer counts only if
 * it is a fresh `ward-discovery+jwt` for the asked capability, signed with the keys this registry
 * delegated to it; each result must be well formed and inside the child's jurisdiction, and its score
 * is held to the range ranking produces. Children that failed are reported, never silently dropped.
 */
import { Compile } from 'typebox/compile';
import type { Clock } from '../../core/clock.ts';
import { DISCOVERY_TYP } from '../../core/crypto/answer-types.ts';
import type { RegistrySigner } from '../trust/registry-signer.ts';
import { BodyTooLargeError, readBodyCapped } from '../../core/http/read-capped.ts';
import type { RegistryRow } from '../storage/stores/registry-store.ts';
import type { DiscoveryQuery, DiscoveryResult } from '../discovery/discovery-service.ts';
import { SCORE_WEIGHTS } from '../discovery/ranking.ts';
import { DiscoveryResultCheckSchema } from '../../contract/schemas/discovery-schemas.ts';
import { TRUST_LEVELS } from '../trust/trust-validation.ts';
import { offeredKeyMembers, readProtectedHeader, verifiedPayload, type PublishedJwk } from '../../core/crypto/key-set.ts';
import type { ChildRegistries } from './child-registries.ts';
import { issueFederationToken } from './federation-token.ts';

/** Request header: how many milliseconds the asking parent will wait for this answer. */
export const FEDERATION_BUDGET_HEADER = 'ward-federation-budget-ms';

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

export type FederatedAnswer = { results: FederatedResult[]; children: ChildOutcome[] };

/** Children asked at once: enough for a country's organisations without opening hundreds of sockets. */
const FAN_OUT = 8;
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;
const SKEW_MS = 60_000;
/**
 * The highest score ranking.ts can give: top trust level, healthy, jurisdiction match, priority 0.
 * A child's score above it could only come from a child putting its agents first.
 */
const MAX_SCORE = Math.max(...Object.keys(TRUST_LEVELS).map(Number)) * SCORE_WEIGHTS.trust_level + 2 * SCORE_WEIGHTS.health + SCORE_WEIGHTS.jurisdiction + 999 / 100;
/** Share of the parent's budget a child spends on its own children, and what it keeps back for itself. */
const BUDGET_SHARE = 0.6;
const BUDGET_MARGIN_MS = 50;
const MIN_CHILD_TIMEOUT_MS = 100;

const checkResult = Compile(DiscoveryResultCheckSchema);

type Asked = { outcome: ChildOutcome; results: FederatedResult[] };
type Deadline = { at: number; timeoutMs: number };
type SignedAnswer = { results: unknown[]; partial: boolean } | { refused: string };

/**
 * How long a registry asked by its parent waits for its own children: its configured timeout, cut to
 * 60% of the parent's budget less a margin (at least 100 ms), so that it answers, partially if need
 * be, before the parent gives up on it. A missing or malformed budget leaves the configured timeout.
 */
export function timeoutWithinBudget(configuredMs: number, budget: string | string[] | undefined): number {
  if (typeof budget !== 'string' || !/^[1-9][0-9]{0,6}$/.test(budget)) return configuredMs;
  return Math.min(configuredMs, Math.max(MIN_CHILD_TIMEOUT_MS, Math.floor(Number(budget) * BUDGET_SHARE) - BUDGET_MARGIN_MS));
}

export function createFederatedDiscovery(deps: {
  children: ChildRegistries;
  signer: RegistrySigner;
  registryId: string;
  clock: Clock;
  timeoutMs: number;
  fetch?: typeof fetch;
}) {
  const fetchImpl = deps.fetch ?? fetch;

  async function askChild(child: RegistryRow & { api_base_url: string }, query: DiscoveryQuery, deadline: Deadline): Promise<Asked> {
    const failed = (status: ChildOutcome['status'], error: string): Asked => ({ outcome: { registry_id: child.id, status, result_count: 0, error }, results: [] });
    const budgetMs = Math.floor(deadline.at - performance.now());
    if (budgetMs <= 0) return failed('timeout', `not asked before the ${deadline.timeoutMs} ms deadline`);
    const token = await issueFederationToken(deps.signer, { iss: deps.registryId, aud: child.id, now: deps.clock.now() });
    let text: string;
    try {
      // Each child's signal ends at the shared deadline, so the whole fan-out ends there too.
      const response = await fetchImpl(`${child.api_base_url}/v1/discover?${childParams(child, query)}`, {
        headers: { authorization: `Bearer ${token}`, accept: 'application/json', [FEDERATION_BUDGET_HEADER]: String(budgetMs) },
        signal: AbortSignal.timeout(budgetMs),
        redirect: 'error',
      });
      if (!response.ok) {
        await response.body?.cancel().catch(() => undefined);
        return failed('error', `HTTP ${response.status}`);
      }
      text = await readBodyCapped(response, MAX_ANSWER_BYTES);
    } catch (error) {
      if (error instanceof BodyTooLargeError) return failed('error', `the answer is larger than ${MAX_ANSWER_BYTES} bytes`);
      const name = (error as Error).name;
      return name === 'TimeoutError' || name === 'AbortError' ? failed('timeout', `no answer within the ${deadline.timeoutMs} ms deadline`) : failed('unreachable', 'connection failed');
    }
    const signed = await signedAnswer(child, query, text, deadline.timeoutMs);
    if ('refused' in signed) return failed('error', signed.refused);
    return checkedResults(child, signed);
  }

  /** The results inside the child's signed_response, or why the answer cannot be used. */
  async function signedAnswer(child: RegistryRow, query: DiscoveryQuery, text: string, timeoutMs: number): Promise<SignedAnswer> {
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
      // Only a sovereign holds agents for other registries, and only for registries of its own country.
      const registryId = child.tier === 'sovereign' && result.registry_id !== undefined && ownRegistry.test(result.registry_id) ? result.registry_id : child.id;
      kept.push({ ...result, score: Math.min(MAX_SCORE, Math.max(0, result.score)), registry_id: registryId });
    }
    const notes = [
      ...(invalid > 0 ? [`${invalid} invalid result(s) dropped`] : []),
      ...(outside > 0 ? [`${outside} result(s) outside ${child.jurisdiction} dropped`] : []),
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

  return {
    /**
     * `local` merged with what the children answer. `timeoutMs` (default: the configured one) is the
     * one deadline for the whole fan-out; a child not yet asked by then is reported as `timeout`.
     */
    async discover(query: DiscoveryQuery, local: DiscoveryResult[], options: { timeoutMs?: number } = {}): Promise<FederatedAnswer> {
      const timeoutMs = options.timeoutMs ?? deps.timeoutMs;
      // A child without an address is not part of federated discovery (docs/federation.md).
      const children = (await deps.children.activeChildren()).filter((child): child is RegistryRow & { api_base_url: string } => Boolean(child.api_base_url));
      const deadline: Deadline = { at: performance.now() + timeoutMs, timeoutMs };
      const answers = await inPool(children, FAN_OUT, (child) => askChild(child, query, deadline));
      // This registry's own record of an agent always wins over a child's copy of it.
      const localIds = new Set(local.map((result) => result.agent_id));
      const fromChildren = answers.flatMap((answer) => answer.results).filter((result) => !localIds.has(result.agent_id));
      const merged = [...local.map((result) => ({ ...result, registry_id: deps.registryId })), ...fromChildren];
      // One ranking across registries: score first, then the agent id so equal scores stay in a stable order.
      merged.sort((a, b) => b.score - a.score || (a.agent_id < b.agent_id ? -1 : a.agent_id > b.agent_id ? 1 : 0));
      const seen = new Set<string>();
      const unique = merged.filter((result) => {
        if (seen.has(result.agent_id)) return false;
        seen.add(result.agent_id);
        return true;
      });
      return { results: unique.slice(0, query.limit), children: answers.map((answer) => answer.outcome) };
    },
  };
}

export type FederatedDiscovery = ReturnType<typeof createFederatedDiscovery>;

/** The same filters, as query parameters; a sovereign is asked to federate in turn, one tier at a time. */
function childParams(child: RegistryRow, query: DiscoveryQuery): URLSearchParams {
  const params = new URLSearchParams({ capability: query.capability, limit: String(query.limit) });
  if (query.jurisdiction) params.set('jurisdiction', query.jurisdiction);
  if (query.require_features.length > 0) params.set('require_features', query.require_features.join(','));
  if (query.protocol) params.set('protocol', query.protocol);
  if (query.token_binding) params.set('token_binding', query.token_binding);
  if (query.residency) params.set('residency', query.residency);
  if (query.purpose_of_use) params.set('purpose_of_use', query.purpose_of_use);
  if (child.tier === 'sovereign') params.set('federated', 'true');
  return params;
}

/** `task` over every item, at most `size` at once, a new one starting as soon as one ends; results in item order. */
async function inPool<T, R>(items: readonly T[], size: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(size, items.length) }, worker));
  return results;
}

function jurisdictionOf(agentId: unknown): string | undefined {
  const match = typeof agentId === 'string' ? /^registry:\/\/([a-z]{2})\/agents\//.exec(agentId) : null;
  return match?.[1]?.toUpperCase();
}
