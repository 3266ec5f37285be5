import type { FastifyInstance } from 'fastify';
import type { MeshConfig } from '../mesh-config.ts';
import { buildGateway, gatewayUrl, type BuildGatewayOptions } from './gateway-app.ts';

export type RunningGateway = {
  readonly app: FastifyInstance;
  /** `http://host:port`; agents are at `${url}/rpc/<alias>`. */
  readonly url: string;
  /** Agents at the root of listeners of their own (`GATEWAY_ROOT_LISTENERS`): alias → `http://host:port/`. */
  readonly rootUrls: ReadonlyMap<string, string>;
  /** Stops every agent, then the gateway. */
  close(): Promise<void>;
};

/**
 * Starts the gateway from the mesh configuration: build, listen on MESH_HOST:GATEWAY_PORT (`0`: any
 * free port), log the address. What `ward gateway` runs, and what `ward start` can call.
 */
export async function startGateway(config: MeshConfig, options: Omit<BuildGatewayOptions, 'config'> = {}): Promise<RunningGateway> {
  const rootUrls = new Map<string, string>();
  const app = await buildGateway({ ...options, config, rootUrls });
  try {
    await app.listen({ host: config.MESH_HOST, port: config.GATEWAY_PORT });
  } catch (error) {
    await app.close();
    throw error;
  }
  const url = gatewayUrl(app, config);
  app.log.info({ url, agents: app.meshFleet.snapshot(0).map((agent) => agent.alias) }, 'gateway listening');
  return { app, url, rootUrls, close: () => app.close() };
}
