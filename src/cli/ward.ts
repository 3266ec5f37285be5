#!/usr/bin/env node
// The `ward` command (contract §1). Each command loads the configuration once; a bad value stops it
// with a message naming the variable.
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../core/config.ts';
import { openStorage, storageOptionsFromConfig } from '../core/storage/database.ts';
import { migrateToLatest } from '../core/storage/migrator.ts';
import { closeOnSignals, startRegistry } from '../registry/server.ts';

const USAGE = `Usage: ward <command>

Commands:
  start      start the registry on the embedded default (console and gateway come with later releases)
  registry   start the registry REST API (REGISTRY_PORT, default 8080)
  migrate    apply pending database migrations and exit
  help       show this text

Configuration is read from the environment; see docs/configuration.md.`;

async function main(argv: string[]): Promise<number> {
  const { positionals } = parseArgs({ args: argv, allowPositionals: true, strict: false });
  const command = positionals[0] ?? 'help';
  switch (command) {
    case 'start':
    case 'registry': {
      const app = await startRegistry(loadConfig());
      closeOnSignals([app]);
      if (command === 'start') {
        console.log(`Ward registry: ${app.ward.baseUrl()}  (OpenAPI: ${app.ward.baseUrl()}/v1/openapi.json)`);
      }
      return -1; // keep running
    }
    case 'migrate': {
      const config = loadConfig();
      const storage = await openStorage(storageOptionsFromConfig(config));
      try {
        const applied = await migrateToLatest(storage);
        console.log(applied.length > 0 ? `applied: ${applied.join(', ')}` : 'up to date');
      } finally {
        await storage.close();
      }
      return 0;
    }
    case 'help':
    case '--help':
    case '-h':
      console.log(USAGE);
      return 0;
    default:
      console.error(`ward: unknown command "${command}"\n\n${USAGE}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof ConfigError) console.error(`ward: configuration error: ${error.message}`);
    else console.error('ward: failed:', error);
    process.exitCode = 1;
  },
);
