import type { FastifyInstance } from 'fastify';
import type { MeshConfig } from '../mesh-config.ts';
import { buildGateway, gatewayUrl, type BuildGatewayOptions } from './gateway-app.ts';

export type RunningGateway = {
  readonly app: FastifyInstance;
  /** `http://host:port`; agents are at `${url}/rpc/<alias>`. */
  readonly url: string;
  /** Stops every agent, then the gateway. */
  close(): Promise<void>;
};

/**
 * Starts the gateway from the mesh configuration: build, listen on MESH_HOST:GATEWAY_PORT (`0`: any
 * free port), log the address. What `ward gateway` runs, and what `ward start` can call.
 */
export async function startGateway(config: MeshConfig, options: Omit<BuildGatewayOptions, 'config'> = {}): Promise<RunningGateway> {
  const app = await buildGateway({ ...options, config });
  await app.listen({ host: config.MESH_HOST, port: config.GATEWAY_PORT });
  const url = gatewayUrl(app, config);
  app.log.info({ url, agents: app.meshFleet.snapshot(0).map((agent) => agent.alias) }, 'gateway listening');
  return { app, url, close: () => app.close() };
}
