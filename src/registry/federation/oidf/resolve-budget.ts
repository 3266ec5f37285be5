/**
 * The resolve endpoint's fetch budget (issue 41, finding 5): each client address may make the registry
 * fetch at most REGISTRY_OIDF_RESOLVE_FETCHES_PER_MINUTE entity configurations, statements and trust
 * mark statuses a minute, across all its resolve requests, so one address at the public rate limit
 * cannot turn the registry into a fetcher of hosts of its choosing (12 fetches a request, 120 requests a
 * minute: 1 440 fetches). A token bucket per address (limits/token-bucket.ts), per instance, in memory,
 * at most {@link MAX_CALLERS} addresses (the least recently seen forgotten: a forgotten one starts full).
 */
import { OidfError } from '../../../client/oidf/oidf-error.ts';
import type { Clock } from '../../../core/clock.ts';
import { UNITS_PER_TOKEN, hasToken, refill, takeToken, type Bucket } from '../../metering/index.ts';

const MAX_CALLERS = 10_000;

/** One request's share of its caller's budget. */
export type FetchBudget = {
  /** Takes one fetch; false when the caller has none left. */
  take(): boolean;
  /** The refusal once spent: 429 `temporarily_unavailable`, with the wait. */
  refusal(): OidfError;
};

export function createResolveBudgets(options: { perMinute: number; clock: Clock }) {
  const buckets = new Map<string, Bucket>();
  const current = (caller: string): Bucket => {
    const bucket = refill(buckets.get(caller), options.perMinute, options.clock.now().getTime());
    buckets.delete(caller);
    buckets.set(caller, bucket);
    if (buckets.size > MAX_CALLERS) buckets.delete(buckets.keys().next().value as string);
    return bucket;
  };
  return {
    for(caller: string): FetchBudget {
      return {
        take() {
          const bucket = current(caller);
          if (!hasToken(bucket)) return false;
          buckets.set(caller, takeToken(bucket));
          return true;
        },
        refusal() {
          const bucket = current(caller);
          // Units come back at `perMinute` a millisecond: one whole token in (missing / perMinute) ms.
          const waitMs = Math.ceil((UNITS_PER_TOKEN - (bucket.units % UNITS_PER_TOKEN)) / options.perMinute);
          const retryAfterS = Math.max(1, Math.ceil(waitMs / 1000));
          return new OidfError('temporarily_unavailable', `This client address has used its ${options.perMinute} resolve fetches a minute; retry in ${retryAfterS} s.`, { status: 429, retryAfterS });
        },
      };
    },
  };
}

export type ResolveBudgets = ReturnType<typeof createResolveBudgets>;

/** `fetch` charged to `budget`: a fetch the budget cannot pay is not made (it rejects, and `spent` says so). */
export function chargedFetch(fetchImpl: typeof fetch, budget: FetchBudget): { fetch: typeof fetch; spent(): boolean } {
  let spent = false;
  const charged = ((input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
    if (!budget.take()) {
      spent = true;
      return Promise.reject(new Error('the resolve fetch budget is spent'));
    }
    return fetchImpl(input, init);
  }) as typeof fetch;
  return { fetch: charged, spent: () => spent };
}
