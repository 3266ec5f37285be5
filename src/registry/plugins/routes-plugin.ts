import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { agentRoutes } from '../routes/agents.ts';
import { agentCardRoutes } from '../routes/agent-cards.ts';
import { apiKeyRoutes } from '../routes/api-keys.ts';
import { computerUseRoutes } from '../routes/computer-use.ts';
import { fhirRoutes } from '../routes/fhir.ts';
import { openIdFederationRoutes } from '../routes/openid-federation.ts';
import { discoveryRoutes } from '../routes/discovery.ts';
import { eventHistoryRoutes, eventRoutes, type EventRoutesOptions } from '../routes/events.ts';
import { landingRoutes } from '../routes/landing.ts';
import { metadataRoutes } from '../routes/metadata.ts';
import { openApiOptions, openApiRoutes } from '../routes/openapi.ts';
import { operationsRoutes } from '../routes/operations.ts';
import { registryRoutes } from '../routes/registries.ts';
import { routingRoutes } from '../routes/routing.ts';
import { transparencyRoutes } from '../routes/transparency.ts';
import { trustRoutes } from '../routes/trust.ts';
import { usageRoutes } from '../routes/usage.ts';

export type RoutesPluginOptions = {
  /** Event-stream tunables (ping interval, stall timeout…); tests shorten them. */
  events: EventRoutesOptions;
};

/**
 * The `ward-registry-api` plugin: the OpenAPI document and every route group, in the order the
 * document lists them (the document's route is last, so it describes all the others).
 */
export const routesPlugin = fastifyPlugin<RoutesPluginOptions>(
  async (app: FastifyInstance, options) => {
    const { limiter, meter, traffic, redis, draining } = app.wardEdge;
    const { heartbeat, startedAt, serverMetrics } = app.wardInstance;
    await app.register(swagger, openApiOptions(app.ward.config));
    await app.register(landingRoutes);
    await app.register(metadataRoutes);
    await app.register(agentRoutes);
    await app.register(agentCardRoutes);
    await app.register(eventRoutes, options.events);
    await app.register(eventHistoryRoutes);
    await app.register(transparencyRoutes);
    await app.register(discoveryRoutes);
    await app.register(routingRoutes);
    await app.register(trustRoutes);
    await app.register(registryRoutes);
    await app.register(apiKeyRoutes);
    await app.register(usageRoutes, { limiter, meter });
    await app.register(operationsRoutes, { traffic, heartbeat, startedAt, redis, metrics: serverMetrics, draining });
    await app.register(computerUseRoutes, { computerUse: app.ward.computerUse });
    await app.register(fhirRoutes, { prefix: '/fhir' });
    await app.register(openIdFederationRoutes);
    await app.register(openApiRoutes);
  },
  { name: 'ward-registry-api', fastify: '5.x', dependencies: ['ward-registry-edge'] },
);
