import { randomBytes } from 'node:crypto';
import type { Clock } from '../../../src/core/clock.ts';
import { bearer, createKey } from '../../helpers/keys.ts';
import type { TestRegistry } from '../../helpers/registry.ts';

export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** The registry's environment for each limiter: in memory (no REDIS_URL) and Redis. */
export const LIMITER_ENVS: Record<'memory' | 'redis', Record<string, string>> = {
  memory: {},
  redis: { REDIS_URL },
};

/** A clock that moves only when told: limits are tested without sleeping through real minutes. */
export type ManualClock = Clock & { ms: number; advance(ms: number): void; set(iso: string): void };

export function manualClock(iso = '2030-01-15T10:00:00.000Z'): ManualClock {
  const clock = {
    ms: Date.parse(iso),
    now: () => new Date(clock.ms),
    advance(ms: number) {
      clock.ms += ms;
    },
    set(at: string) {
      clock.ms = Date.parse(at);
    },
  };
  return clock;
}

/** A Redis key prefix no other test uses. */
export function uniquePrefix(): string {
  return `ward:test:${randomBytes(6).toString('hex')}:`;
}

/** The three kinds of request a key can make: general, discovery and routing. */
export const REQUESTS = {
  general: { method: 'GET', url: '/v1/agents' },
  discovery: { method: 'GET', url: '/v1/discover?capability=triage.assess' },
  routing: { method: 'POST', url: '/v1/route', payload: { capability: 'triage.assess' } },
} as const;

export type RequestKind = keyof typeof REQUESTS;

/** A key of the tier (read scope) and a function making one request of a kind with it. */
export async function keyOfTier(registry: TestRegistry, tier: string, extra: Record<string, unknown> = {}) {
  const key = await createKey(registry, { tier, scopes: ['registry:read'], ...extra });
  const send = (kind: RequestKind) => registry.call({ ...REQUESTS[kind], headers: bearer(key.raw_key) });
  return { key, send };
}

/** Sends `count` requests of a kind one after the other; returns their statuses. */
export async function burst(
  send: (kind: RequestKind) => Promise<{ status: number }>,
  kind: RequestKind,
  count: number,
): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i += 1) statuses.push((await send(kind)).status);
  return statuses;
}

/** How many of the statuses were admitted (anything but 429), and the index of the first 429. */
export function admitted(statuses: readonly number[]): { admitted: number; firstRefused: number } {
  return { admitted: statuses.filter((s) => s !== 429).length, firstRefused: statuses.indexOf(429) };
}
