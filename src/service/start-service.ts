import type { FastifyInstance } from 'fastify';
import type { Config } from '../core/config.ts';
import { startGateway, type RunningGateway } from '../mesh/gateway/gateway-server.ts';
import type { MeshConfig } from '../mesh/mesh-config.ts';
import { startRegistry } from '../registry/server.ts';
import { seedMeshAgents } from './seed-mesh-agents.ts';

export type RunningService = {
  readonly registry: FastifyInstance;
  readonly gateway: RunningGateway;
  readonly agentIds: readonly string[];
  close(): Promise<void>;
};

/**
 * The whole service on one machine (contract §1, `ward start`): the registry, the mesh gateway, and
 * the shipped agents registered with endpoints at the gateway. The console joins it in its release.
 */
export async function startService(config: Config, meshConfig: MeshConfig): Promise<RunningService> {
  const registry = await startRegistry(config);
  let gateway: RunningGateway | undefined;
  try {
    gateway = await startGateway(meshConfig);
    const agentIds = await seedMeshAgents(registry.ward, gateway.url, registry.ward.clock);
    const running = gateway;
    return {
      registry,
      gateway: running,
      agentIds,
      close: async () => {
        await running.close();
        await registry.close();
      },
    };
  } catch (error) {
    await gateway?.close();
    await registry.close();
    throw error;
  }
}
