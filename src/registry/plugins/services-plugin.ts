import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { Clock } from '../../core/clock.ts';
import type { Config } from '../../core/config.ts';
import { keySealerFromConfig } from '../../core/crypto/key-sealer.ts';
import type { ServerMetrics } from '../../core/http/http-metrics.ts';
import type { InstanceHeartbeat } from '../operations/instance-heartbeat.ts';
import { registryServices } from './registry-services.ts';
import { openStorage, storageOptionsFromConfig, type Storage } from '../storage/database.ts';
import { migrate } from '../storage/migrator.ts';
import { loadKnownIssuers } from '../agents/evidence/known-issuers.ts';
import { loadRegistrySigner } from '../signing-keys/registry-signer.ts';
import { createRegistryServices } from './create-services.ts';
import type { OpenedResources } from './opened-resources.ts';

/** What belongs to this instance of the registry rather than to the registry's data. */
export type RegistryInstance = {
  readonly startedAt: Date;
  /** This instance's row in the instances table, kept fresh while it runs. */
  readonly heartbeat: InstanceHeartbeat;
  /** The HTTP metrics of this instance (core/http/http-metrics.ts). */
  readonly serverMetrics: ServerMetrics;
  /** Whether the registry opened its storage itself, and so closes it with the app. */
  readonly ownsStorage: boolean;
};

declare module 'fastify' {
  interface FastifyInstance {
    wardInstance: RegistryInstance;
  }
}

export type ServicesPluginOptions = {
  config: Config;
  /** An already open storage (tests share one); otherwise opened from the config and closed with the app. */
  storage?: Storage | undefined;
  clock: Clock;
  startedAt: Date;
  /** Filled as resources open, so a build that fails later closes them (opened-resources.ts). */
  opened: OpenedResources;
};

/**
 * The `ward-registry-service-set` plugin: opens and migrates storage, loads or creates the signing key,
 * builds every service and decorates the app with them (`app.ward`, through `ward-registry-services`)
 * and with this instance's own parts (`app.wardInstance`).
 */
export const servicesPlugin = fastifyPlugin<ServicesPluginOptions>(
  async (app: FastifyInstance, options) => {
    const { config, clock, opened } = options;
    const ownsStorage = options.storage === undefined;
    const storage = options.storage ?? (await openStorage(storageOptionsFromConfig(config)));
    Object.assign(opened, { storage, ownsStorage });
    // A contracting step runs here only when no other instance is live; otherwise `ward migrate` runs it.
    const migrated = await migrate(storage, { contract: 'when-alone' });
    if (migrated.refused) app.log.info({ migration: migrated.refused.name, live_instances: migrated.refused.instances.length }, 'contracting migration left for `ward migrate`: other instances are live');
    const keySealer = keySealerFromConfig(config);
    const signer = await loadRegistrySigner(storage, config.REGISTRY_SIGNING_ALG, clock, config.REGISTRY_KEY_LIFETIME_DAYS, keySealer);
    const knownIssuers = await loadKnownIssuers(config, signer);
    const { services, heartbeat, serverMetrics } = await createRegistryServices(app, { config, storage, clock, signer, knownIssuers, keySealer, opened });
    await app.register(registryServices, { services });
    app.decorate('wardInstance', { startedAt: options.startedAt, heartbeat, serverMetrics, ownsStorage });
  },
  { name: 'ward-registry-service-set', fastify: '5.x' },
);
