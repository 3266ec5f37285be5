import { loadMeshConfig } from '../../mesh/mesh-config.ts';
import { startGateway } from '../../mesh/gateway/gateway-server.ts';
import { servingCommand } from '../serving-command.ts';

const USAGE = `Usage: ward gateway

Starts the mesh gateway on GATEWAY_PORT (default 8100); the agents of the manifest (MESH_MANIFEST)
start as child processes on their first call (docs/mesh.md).

Example:
  GATEWAY_PORT=8200 npx ward gateway`;

export const gatewayCommand = servingCommand('gateway', USAGE, async () => {
  const gateway = await startGateway(loadMeshConfig());
  console.log(`Ward mesh gateway: ${gateway.url}  (agents at ${gateway.url}/rpc/<alias>, health at ${gateway.url}/health)`);
  return { apps: [gateway.app] };
});
