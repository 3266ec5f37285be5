/**
 * The `ward` commands by name, with the one-line summary the general help lists. Each command's
 * module (and everything it needs: the registry, the mesh, Chromium's driver…) is loaded only when
 * that command runs or shows its usage, so `ward --version`, `ward help` and every other command
 * start without loading the rest.
 */
import type { WardCommand } from './command.ts';

export type CommandEntry = { readonly name: string; readonly summary: string; load(): Promise<WardCommand> };

export const COMMANDS: readonly CommandEntry[] = [
  { name: 'start', summary: 'start the registry, the admin console and the mesh gateway on the embedded default, register the mesh agents, print the URLs', load: async () => (await import('./commands/start.ts')).startCommand },
  { name: 'registry', summary: 'start the registry REST API (REGISTRY_PORT, default 8080)', load: async () => (await import('./commands/registry.ts')).registryCommand },
  { name: 'console', summary: 'start the admin console (CONSOLE_PORT, default 3000) for the registry at REGISTRY_URL', load: async () => (await import('./commands/console.ts')).consoleCommand },
  { name: 'migrate', summary: 'apply pending database migrations and exit', load: async () => (await import('./commands/migrate.ts')).migrateCommand },
  { name: 'backup', summary: 'copy the embedded database to a file, online, and check the copy', load: async () => (await import('./commands/backup.ts')).backupCommand },
  { name: 'restore', summary: 'replace the embedded database with a backup made by ward backup', load: async () => (await import('./commands/backup.ts')).restoreCommand },
  { name: 'keys', summary: 'create an API key offline: keys create --org … --tier … --scopes …', load: async () => (await import('./commands/keys.ts')).keysCommand },
  { name: 'ledger', summary: 'verify the transparency ledger: ledger verify --url <registry> [--leaf N] [--state file]', load: async () => (await import('./commands/ledger.ts')).ledgerCommand },
  { name: 'gateway', summary: 'start the mesh gateway (GATEWAY_PORT, default 8100); agents start on first use', load: async () => (await import('./commands/gateway.ts')).gatewayCommand },
  { name: 'agent', summary: 'run one mesh agent: ward agent <alias> (AGENT_PORT, default its manifest port)', load: async () => (await import('./commands/agent.ts')).agentCommand },
  { name: 'token', summary: 'print a mesh token signed with MESH_JWT_SECRET (for curl and development)', load: async () => (await import('./commands/token.ts')).tokenCommand },
  { name: 'trust', summary: 'verify a trust bundle and its chain: trust verify <bundle.json> --anchor <anchor.json> [--online]', load: async () => (await import('./commands/trust.ts')).trustCommand },
  { name: 'federation', summary: 'start a root, a sovereign (GB) and an organisational registry, wired together: federation up', load: async () => (await import('./commands/federation.ts')).federationCommand },
  { name: 'cluster', summary: 'run several supervised registry instances behind HAProxy: cluster up [--instances N] [--base-port P]; cluster status', load: async () => (await import('./commands/cluster.ts')).clusterCommand },
  { name: 'computer-use', summary: 'start the demonstration model for computer use on loopback (COMPUTER_USE_DEMO_MODEL_PORT, default 8190): computer-use demo-model', load: async () => (await import('./commands/computer-use.ts')).computerUseCommand },
  { name: 'mcp', summary: 'serve the MCP tools (discover_agents, route, register): mcp [--transport stdio|sse] [--port 8090]', load: async () => (await import('./commands/mcp.ts')).mcpCommand },
];
