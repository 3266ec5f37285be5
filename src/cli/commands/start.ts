import { loadConfig } from '../../core/config.ts';
import { loadMeshConfig } from '../../mesh/mesh-config.ts';
import { closeOnSignals } from '../../registry/server.ts';
import { startService } from '../../service/start-service.ts';
import type { WardCommand } from '../command.ts';

export const startCommand: WardCommand = {
  name: 'start',
  summary: 'start the registry, the admin console and the mesh gateway on the embedded default, register the mesh agents, print the URLs',
  async run() {
    const service = await startService(loadConfig(), loadMeshConfig());
    closeOnSignals([service.console.app, service.registry, service.gateway.app]);
    const registryUrl = service.registry.ward.baseUrl();
    console.log(
      [
        `Ward registry:  ${registryUrl}  (OpenAPI: ${registryUrl}/v1/openapi.json)`,
        `Admin console:  ${service.console.url}${service.console.openAccess ? '  (development: open without sign-in)' : ''}`,
        `Mesh gateway:   ${service.gateway.url}  (agents at ${service.gateway.url}/rpc/<alias>)`,
        `Mesh agents registered: ${service.agentIds.join(', ')}`,
      ].join('\n'),
    );
    return 'running';
  },
};
