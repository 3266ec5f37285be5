import { loadConsoleConfig } from '../../console/console-config.ts';
import { startConsole } from '../../console/console-server.ts';
import { closeOnSignals } from '../../registry/server.ts';
import type { WardCommand } from '../command.ts';

export const consoleCommand: WardCommand = {
  name: 'console',
  summary: 'start the admin console (CONSOLE_PORT, default 3000) for the registry at REGISTRY_URL',
  async run() {
    const running = await startConsole(loadConsoleConfig());
    closeOnSignals([running.app]);
    return 'running';
  },
};
