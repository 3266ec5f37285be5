import type { FastifyInstance } from 'fastify';
import { loadConsoleConfig } from '../console/console-config.ts';
import { startConsole, type RunningConsole } from '../console/console-server.ts';
import type { Config } from '../core/config.ts';
import { startGateway, type RunningGateway } from '../mesh/gateway/gateway-server.ts';
import type { MeshConfig } from '../mesh/mesh-config.ts';
import { createRegistryClient } from '../client/registry-client.ts';
import { createMcpServer } from '../mcp/server.ts';
import { startHttpService, type HttpService } from '../mcp/transports/http.ts';
import { startRegistry } from '../registry/server.ts';
import { firstProbe } from './first-probe.ts';
import { seedMeshAgents } from './seed-mesh-agents.ts';

export type RunningService = {
  readonly registry: FastifyInstance;
  readonly gateway: RunningGateway;
  readonly console: RunningConsole;
  /** The MCP tools over streamable HTTP on a loopback port of its own, for the console's try page. */
  readonly mcp: HttpService;
  readonly agentIds: readonly string[];
  close(): Promise<void>;
};

/**
 * The whole service on one machine (contract §1, `ward start`): the registry, the admin console, the
 * mesh gateway, and the shipped agents registered with endpoints at the gateway and probed at once
 * (first-probe.ts). The console reads
 * its own settings from `env` (docs/console.md) and is pointed at the registry and gateway started
 * here, whatever ports they got.
 */
export async function startService(config: Config, meshConfig: MeshConfig, env: Record<string, string | undefined> = process.env): Promise<RunningService> {
  const registry = await startRegistry(config);
  let gateway: RunningGateway | undefined;
  let console: RunningConsole | undefined;
  let mcp: HttpService | undefined;
  try {
    gateway = await startGateway(meshConfig);
    // The MCP tools the console's try page calls (any free loopback port: `ward mcp` keeps MCP_PORT for clients).
    const tools = createRegistryClient({ baseUrl: registry.ward.baseUrl(), credential: env.REGISTRY_API_KEY || undefined, userAgent: 'ward-mcp' });
    mcp = await startHttpService({ host: '127.0.0.1', port: 0, createServer: () => createMcpServer(tools), log: (line) => registry.log.info(line) });
    console = await startConsole(
      loadConsoleConfig({ CONSOLE_LOG_LEVEL: env.REGISTRY_LOG_LEVEL, CONSOLE_REQUEST_LOG: env.REGISTRY_REQUEST_LOG, CONSOLE_MCP_URL: `${mcp.url}/mcp`, ...env, REGISTRY_URL: registry.ward.baseUrl(), GATEWAY_URL: gateway.url }),
    );
    registry.ward.computerUse.setConsoleOrigin(config.CONSOLE_URL ?? console.url);
    const agentIds = await seedMeshAgents(registry.ward, gateway.url, registry.ward.clock);
    const probed = config.REGISTRY_HEALTH_PROBES ? firstProbe(registry.ward, gateway.url, meshConfig.GATEWAY_START_TIMEOUT_MS) : Promise.resolve();
    const running = { gateway, console, mcp };
    return {
      registry,
      gateway: running.gateway,
      console: running.console,
      mcp: running.mcp,
      agentIds,
      close: async () => {
        await probed;
        await running.console.close();
        await running.mcp.close();
        await running.gateway.close();
        await registry.close();
      },
    };
  } catch (error) {
    await console?.close();
    await mcp?.close();
    await gateway?.close();
    await registry.close();
    throw error;
  }
}
