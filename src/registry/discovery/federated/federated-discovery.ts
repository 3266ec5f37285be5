/**
 * Federated discovery (contract §5, docs/federation.md): a root or sovereign registry answers from
 * its own agents and asks each active child registry that has an address too, at most eight at a
 * time, all within one deadline. Each child is told how long it will be waited for, so a sovereign
 * cuts its own fan-out short and still answers with its own agents. What one child's answer must be
 * to count is ./child-discovery.ts. Children that failed are reported, never silently dropped.
 */
import type { Clock } from '../../../core/clock.ts';
import type { RegistrySigner } from '../../signing-keys/index.ts';
import type { DiscoveryQuery, DiscoveryResult } from '../discovery-service.ts';
import type { ChildRegistries } from '../../federation/index.ts';
import { askChild, type AskableChild, type ChildOutcome, type Deadline, type FederatedResult } from './child-discovery.ts';

export { FEDERATION_BUDGET_HEADER } from '../../../client/federation-client.ts';
export type { ChildOutcome, FederatedResult } from './child-discovery.ts';

export type FederatedAnswer = { results: FederatedResult[]; children: ChildOutcome[] };

/** Children asked at once: enough for a country's organisations without opening hundreds of sockets. */
const FAN_OUT = 8;
/** Share of the parent's budget a child spends on its own children, and what it keeps back for itself. */
const BUDGET_SHARE = 0.6;
const BUDGET_MARGIN_MS = 50;
const MIN_CHILD_TIMEOUT_MS = 100;

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
  return {
    /**
     * `local` merged with what the children answer. `timeoutMs` (default: the configured one) is the
     * one deadline for the whole fan-out; a child not yet asked by then is reported as `timeout`.
     */
    async discover(query: DiscoveryQuery, local: DiscoveryResult[], options: { timeoutMs?: number } = {}): Promise<FederatedAnswer> {
      const timeoutMs = options.timeoutMs ?? deps.timeoutMs;
      // A child without an address is not part of federated discovery (docs/federation.md).
      const children = (await deps.children.activeChildren()).filter((child): child is AskableChild => Boolean(child.api_base_url));
      const deadline: Deadline = { at: performance.now() + timeoutMs, timeoutMs };
      const answers = await inPool(children, FAN_OUT, (child) => askChild(deps, child, query, deadline));
      return { results: merged(deps.registryId, local, answers.flatMap((answer) => answer.results), query.limit), children: answers.map((answer) => answer.outcome) };
    },
  };
}

export type FederatedDiscovery = ReturnType<typeof createFederatedDiscovery>;

/** One ranking across registries, each agent once, this registry's own record of an agent winning over a child's copy. */
function merged(registryId: string, local: DiscoveryResult[], fromChildren: FederatedResult[], limit: number): FederatedResult[] {
  const localIds = new Set(local.map((result) => result.agent_id));
  const all = [...local.map((result) => ({ ...result, registry_id: registryId })), ...fromChildren.filter((result) => !localIds.has(result.agent_id))];
  // Score first, then the agent id so equal scores stay in a stable order.
  all.sort((a, b) => b.score - a.score || (a.agent_id < b.agent_id ? -1 : a.agent_id > b.agent_id ? 1 : 0));
  const seen = new Set<string>();
  const unique = all.filter((result) => {
    if (seen.has(result.agent_id)) return false;
    seen.add(result.agent_id);
    return true;
  });
  return unique.slice(0, limit);
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
