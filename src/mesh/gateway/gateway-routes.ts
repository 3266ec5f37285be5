/**
 * The gateway's routes (contract §10) as the `ward-gateway-routes` plugin, over `ward-mesh-transport`
 * (`meshAuthenticate`), `ward-agent-proxy` (`reply.from`) and the fleet (`meshFleet`): JSON-RPC and
 * SSE forwarding and the card (rpc-routes.ts), the WebSocket proxy (websocket-route.ts) and `/health`
 * (health-route.ts). Its own failures are always JSON-RPC envelopes.
 */
import fastifyPlugin from 'fastify-plugin';
import type { MeshConfig } from '../mesh-config.ts';
import { registerHealthRoute, type HealthRouteOptions } from './health-route.ts';
import { registerRpcRoutes } from './rpc-routes.ts';
import { registerWebSocketRoute } from './websocket-route.ts';

export type GatewayRouteOptions = HealthRouteOptions & { readonly config: MeshConfig };

/** The `ward-gateway-routes` plugin; it fails at start-up without the transport, the proxy or the fleet. */
export const gatewayRoutes = fastifyPlugin<GatewayRouteOptions>(
  async (app, options) => {
    registerRpcRoutes(app, options.config);
    registerWebSocketRoute(app);
    registerHealthRoute(app, options);
  },
  {
    name: 'ward-gateway-routes',
    fastify: '5.x',
    dependencies: ['ward-mesh-transport', 'ward-agent-proxy'],
    decorators: { fastify: ['meshAuthenticate', 'meshFleet'] },
  },
);
