import { loadConfig } from '../../core/config.ts';
import { startRegistry } from '../../registry/server.ts';
import { servingCommand } from '../serving-command.ts';

const USAGE = `Usage: ward registry

Starts the registry REST API alone on REGISTRY_HOST:REGISTRY_PORT (default 127.0.0.1:8080), on SQLite
in REGISTRY_DATA_DIR or on PostgreSQL at DATABASE_URL (docs/configuration.md). Stop it with Ctrl-C or
SIGTERM.

Example:
  DATABASE_URL=postgres://root@127.0.0.1:5432/test npx ward registry`;

export const registryCommand = servingCommand('registry', USAGE, async () => {
  const config = loadConfig();
  const app = await startRegistry(config);
  return { apps: [app], graceMs: config.REGISTRY_SHUTDOWN_GRACE_MS, drain: { ms: config.REGISTRY_SHUTDOWN_DRAIN_MS, start: () => app.wardEdge.startDraining() } };
});
