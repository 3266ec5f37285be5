import { loadConsoleConfig } from '../../console/console-config.ts';
import { startConsole } from '../../console/console-server.ts';
import { servingCommand } from '../serving-command.ts';

const USAGE = `Usage: ward console

Starts the admin console on CONSOLE_PORT (default 3000) for the registry at REGISTRY_URL (default
http://127.0.0.1:$REGISTRY_PORT); docs/console.md.

Example:
  REGISTRY_URL=http://127.0.0.1:8080 npx ward console`;

export const consoleCommand = servingCommand('console', USAGE, async () => ({ apps: [(await startConsole(loadConsoleConfig())).app] }));
