import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { agentRoutes } from '../agents/agent-routes.ts';
import { agentCardRoutes } from '../agents/cards/card-routes.ts';
import { apiKeyRoutes } from '../credentials/api-key-routes.ts';
import { computerUseRoutes } from '../computer-use/computer-use-routes.ts';
import { fhirRoutes } from '../fhir/fhir-routes.ts';
import { openIdFederationRoutes } from '../federation/oidf/oidf-routes.ts';
import { discoveryRoutes } from '../discovery/discovery-routes.ts';
import { eventHistoryRoutes, eventRoutes, type EventRoutesOptions } from '../events/event-routes.ts';
import { landingRoutes } from '../operations/landing-routes.ts';
import { metadataRoutes } from '../federation/metadata-routes.ts';
import { openApiOptions, openApiRoutes } from '../openapi/openapi-routes.ts';
import { operationsRoutes } from '../operations/operation-routes.ts';
import { registryRoutes } from '../federation/registry-routes.ts';
import { routingRoutes } from '../discovery/routing/routing-routes.ts';
import { transparencyRoutes } from '../ledger/transparency-routes.ts';
import { trustRoutes } from '../federation/trust-routes.ts';
import { usageRoutes } from '../metering/usage-routes.ts';

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
