import { loadConfig } from '../../core/config.ts';
import { closeOnSignals, startRegistry } from '../../registry/server.ts';
import type { WardCommand } from '../command.ts';

export const registryCommand: WardCommand = {
  name: 'registry',
  summary: 'start the registry REST API (REGISTRY_PORT, default 8080)',
  async run() {
    const app = await startRegistry(loadConfig());
    closeOnSignals([app]);
    return 'running';
  },
};
