import { loadConfig } from '../../core/config.ts';
import { loadMeshConfig } from '../../mesh/mesh-config.ts';
import { checkPortsFree } from '../../service/port-preflight.ts';
import { startService } from '../../service/start-service.ts';
import { servingCommand } from '../serving-command.ts';

const USAGE = `Usage: ward start

Starts the whole service in one process: the registry (REGISTRY_PORT, default 8080), the admin
console (CONSOLE_PORT, default 3000) and the mesh gateway (GATEWAY_PORT, default 8100), and registers
the shipped mesh agents at the gateway. What \`npm start\` runs. Configuration comes from the
environment (docs/configuration.md); stop it with Ctrl-C or SIGTERM.

Example:
  REGISTRY_PORT=9080 npx ward start`;

export const startCommand = servingCommand('start', USAGE, async () => {
  const config = loadConfig();
  const meshConfig = loadMeshConfig();
  const consoleHost = process.env.CONSOLE_HOST || '127.0.0.1';
  await checkPortsFree([
    { variable: 'REGISTRY_PORT', host: config.REGISTRY_HOST, port: config.REGISTRY_PORT },
    { variable: 'CONSOLE_PORT', host: consoleHost, port: config.CONSOLE_PORT },
    { variable: 'GATEWAY_PORT', host: meshConfig.MESH_HOST, port: meshConfig.GATEWAY_PORT },
  ]);
  const service = await startService(config, meshConfig);
  const registryUrl = service.registry.ward.baseUrl();
  console.log(
    [
      `Ward registry:  ${registryUrl}  (OpenAPI: ${registryUrl}/v1/openapi.json)`,
      `Admin console:  ${service.console.url}${service.console.openAccess ? '  (development: open without sign-in)' : ''}`,
      `Mesh gateway:   ${service.gateway.url}  (agents at ${service.gateway.url}/rpc/<alias>)`,
      `Avatar page:    ${service.gateway.url}/rpc/clinician_avatar/avatar  (the clinician avatar, started on first use)`,
      ...[...service.gateway.rootUrls].map(([alias, url]) => `  ${alias} at the root of ${url}  (GATEWAY_ROOT_LISTENERS)`),
      `Mesh agents registered: ${service.agentIds.join(', ')}`,
      ...(config.REGISTRY_AUTH_MODE === 'disabled'
        ? [
            'Development mode: the registry asks for no credentials (REGISTRY_AUTH_MODE=disabled), so anyone who',
            'can reach these ports can read and write. `ward mcp` needs no REGISTRY_API_KEY against it.',
          ]
        : []),
    ].join('\n'),
  );
  return { apps: [service.console.app, service.registry, service.gateway.app], graceMs: config.REGISTRY_SHUTDOWN_GRACE_MS };
});
