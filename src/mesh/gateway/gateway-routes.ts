/**
 * The gateway's routes (contract §10) as the `ward-gateway-routes` plugin, over `ward-mesh-transport`
 * (`meshAuthenticate`), `ward-agent-proxy` (`reply.from`) and the fleet (`meshFleet`): JSON-RPC and
 * SSE forwarding and the card (rpc-routes.ts), the WebSocket proxy (websocket-route.ts), `/health`
 * (health-route.ts), `/tasks`, the log of forwarded exchanges (task-route.ts, task-log.ts), and
 * agents' own HTTP routes under `/rpc/{alias}/` (agent-web-route.ts). Its own failures are always JSON-RPC envelopes.
 */
import fastifyPlugin from 'fastify-plugin';
import type { MeshConfig } from '../mesh-config.ts';
import { registerAgentWebRoute } from './agent-web-route.ts';
import { registerHealthRoute, type HealthRouteOptions } from './health-route.ts';
import { registerLandingRoute } from './landing-route.ts';
import { registerRpcRoutes } from './rpc-routes.ts';
import { createTaskLog } from './task-log.ts';
import { registerTaskRoute } from './task-route.ts';
import { registerWebSocketRoute } from './websocket-route.ts';

export type GatewayRouteOptions = HealthRouteOptions & { readonly config: MeshConfig };

/** The `ward-gateway-routes` plugin; it fails at start-up without the transport, the proxy or the fleet. */
export const gatewayRoutes = fastifyPlugin<GatewayRouteOptions>(
  async (app, options) => {
    const taskLog = createTaskLog(options.clock);
    registerRpcRoutes(app, options.config, taskLog);
    registerWebSocketRoute(app);
    registerHealthRoute(app, options);
    registerTaskRoute(app, taskLog);
    registerAgentWebRoute(app, options.config);
    registerLandingRoute(app);
  },
  {
    name: 'ward-gateway-routes',
    fastify: '5.x',
    dependencies: ['ward-mesh-transport', 'ward-agent-proxy'],
    decorators: { fastify: ['meshAuthenticate', 'meshFleet'] },
  },
);
