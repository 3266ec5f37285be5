import type { Redis } from 'ioredis';
import { pingStorage, type Storage } from '../storage/database.ts';
import { migrationStatus } from '../storage/migrator.ts';

/** How long one readiness check may take before it counts as failed. */
const CHECK_TIMEOUT_MS = 2_000;

export type ReadinessCheck = { ok: boolean; detail: string };
export type Readiness = { ready: boolean; checks: Record<'storage' | 'migrations' | 'redis' | 'draining', ReadinessCheck> };

/**
 * Whether this instance should be sent traffic (docs/operations.md, "Probes"): its storage answers,
 * the database is at the migration level this build expects, Redis answers when it is configured
 * (rate limits and quotas are shared there; without it API-key requests are refused), and it is not
 * shutting down. Liveness is only "the process answers": a failed dependency makes an instance
 * unready, never restarted.
 */
export async function checkReadiness(deps: { storage: Storage; redis?: Redis | undefined; draining: () => boolean }): Promise<Readiness> {
  const [storage, migrations, redis] = await Promise.all([
    check(async () => {
      await pingStorage(deps.storage);
      return deps.storage.backend;
    }),
    check(async () => {
      const status = await migrationStatus(deps.storage);
      if (status.blocking.length > 0) throw new Error(`${status.blocking.length} pending (${status.blocking.join(', ')}); run ward migrate`);
      // Contracting steps wait for `ward migrate` once older instances are gone; this build runs without them.
      const contracting = status.pending.length > 0 ? `; contracting step(s) pending: ${status.pending.join(', ')}` : '';
      return `${status.applied} of ${status.expected} applied${contracting}`;
    }),
    deps.redis
      ? check(async () => {
          await (deps.redis as Redis).ping();
          return 'answers';
        })
      : Promise.resolve({ ok: true, detail: 'not configured' }),
  ]);
  const draining = deps.draining() ? { ok: false, detail: 'shutting down' } : { ok: true, detail: 'no' };
  const checks = { storage, migrations, redis, draining };
  return { ready: Object.values(checks).every((c) => c.ok), checks };
}

async function check(probe: () => Promise<string>): Promise<ReadinessCheck> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const detail = await Promise.race([
      probe(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
      }),
    ]);
    return { ok: true, detail };
  } catch (error) {
    return { ok: false, detail: (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? 'failed' };
  } finally {
    clearTimeout(timer);
  }
}
