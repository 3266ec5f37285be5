/** The registry's route groups declare what they need: assembled without it, a registry fails at start-up, naming it. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import { httpKit } from '../../../src/core/http/http-kit.ts';
import { createServerMetrics } from '../../../src/core/http/http-metrics.ts';
import { discoveryRoutes } from '../../../src/registry/discovery/discovery-routes.ts';
import { registryServices, type RegistryServices } from '../../../src/registry/plugins/registry-services.ts';

const someServices = { discoveryAnswers: {} } as unknown as RegistryServices;

test('a route group registered without the registry services fails at start-up, naming the decorator it needs', async () => {
  const app = Fastify({ logger: false });
  await app.register(httpKit, { metrics: createServerMetrics('registry') });
  await assert.rejects(async () => { await app.register(discoveryRoutes); }, /decorator 'ward' required by 'ward-discovery-routes'/);
  await app.close();
});

test('a route group registered before the HTTP kit fails at start-up and names it', async () => {
  const app = Fastify({ logger: false });
  await app.register(registryServices, { services: someServices });
  await assert.rejects(async () => { await app.register(discoveryRoutes); }, /ward-http-kit/);
  await app.close();
});

test('services decorated by hand instead of through their plugin: named too', async () => {
  const app = Fastify({ logger: false });
  await app.register(httpKit, { metrics: createServerMetrics('registry') });
  app.decorate('ward', someServices);
  await assert.rejects(async () => { await app.register(discoveryRoutes); }, /ward-registry-services/);
  await app.close();
});

test('with both, the group registers, under its own name, with its routes', async () => {
  const app = Fastify({ logger: false });
  await app.register(httpKit, { metrics: createServerMetrics('registry') });
  await app.register(registryServices, { services: someServices });
  await app.register(discoveryRoutes);
  await app.ready();
  assert.ok(app.hasRoute({ method: 'GET', url: '/v1/discover' }));
  assert.equal(app.hasPlugin('ward-discovery-routes'), true);
  await app.close();
});
