import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { deleteExpiredIdempotencyKeys } from '../storage/stores/idempotency-store.ts';

/** Expired idempotency keys are deleted this often. */
const IDEMPOTENCY_SWEEP_MS = 10 * 60 * 1000;
/** Computer-use runs orphaned by a stopped instance are looked for this often. */
const ORPHAN_SWEEP_MS = 60_000;

/**
 * The `ward-registry-jobs` plugin: the registry's background work (sweeps, health probes, card
 * re-reads, the heartbeat, key renewal, the parent link) and the order it all stops in when the app closes.
 */
export const jobsPlugin = fastifyPlugin(
  async (app: FastifyInstance) => {
    const services = app.ward;
    const { storage, clock, config, healthProber, keyRenewal, parentLink } = services;
    const { heartbeat, ownsStorage } = app.wardInstance;
    const { meter, redis } = app.wardEdge;
    const sweep = setInterval(() => {
      deleteExpiredIdempotencyKeys(storage.db, clock.now().toISOString()).catch((error: unknown) =>
        app.log.warn({ err: error }, 'idempotency sweep failed'),
      );
    }, IDEMPOTENCY_SWEEP_MS);
    sweep.unref();
    // Only a listening registry probes; an app driven by inject() in tests runs rounds on demand.
    if (config.REGISTRY_HEALTH_PROBES) app.addHook('onListen', async () => healthProber.start());
    app.addHook('onListen', async () => heartbeat.start());
    app.addHook('onListen', async () => keyRenewal.start());
    // Cards agents were registered from are read again every REGISTRY_CARD_REREAD_INTERVAL_MS (0: never).
    app.addHook('onListen', async () => services.cards.start());
    // Runs left unended by an instance that stopped (crashed) are recorded as failed by the others.
    const orphanSweep = setInterval(() => {
      services.computerUse.runs.sweepOrphans().catch((error: unknown) => app.log.warn({ err: error }, 'computer-use sweep failed'));
    }, ORPHAN_SWEEP_MS);
    orphanSweep.unref();
    parentLink.start();
    app.addHook('onClose', async () => {
      services.metrics.close();
      await services.computerUse.close();
      // The last second of usage counts goes to the database before it closes.
      await meter.close().catch((error: unknown) => app.log.warn({ err: error }, 'usage flush at close failed'));
      redis?.disconnect();
      await healthProber.stop();
      await services.cards.stop();
      await heartbeat.stop();
      parentLink.stop();
      keyRenewal.stop();
      await services.eventHub.close();
      clearInterval(sweep);
      clearInterval(orphanSweep);
      if (ownsStorage) await storage.close();
    });
  },
  { name: 'ward-registry-jobs', fastify: '5.x', dependencies: ['ward-registry-api'] },
);
