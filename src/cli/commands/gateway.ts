import { loadMeshConfig } from '../../mesh/mesh-config.ts';
import { startGateway } from '../../mesh/gateway/gateway-server.ts';
import { servingCommand } from '../serving-command.ts';

const USAGE = `Usage: ward gateway

Starts the mesh gateway on GATEWAY_PORT (default 8100); the agents of the manifest (MESH_MANIFEST)
start as child processes on their first call (docs/mesh.md). GATEWAY_ROOT_LISTENERS=alias=port,…
also presents those agents at the root of listeners of their own, for A2A clients.

Example:
  GATEWAY_PORT=8200 npx ward gateway
  GATEWAY_ROOT_LISTENERS=triage=8202 npx ward gateway`;

export const gatewayCommand = servingCommand('gateway', USAGE, async () => {
  const gateway = await startGateway(loadMeshConfig());
  console.log(`Ward mesh gateway: ${gateway.url}  (agents at ${gateway.url}/rpc/<alias>, health at ${gateway.url}/health)`);
  for (const [alias, url] of gateway.rootUrls) console.log(`  ${alias} at the root of ${url}  (card: ${url}.well-known/agent-card.json)`);
  return { apps: [gateway.app] };
});
