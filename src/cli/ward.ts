#!/usr/bin/env node
// The `ward` command (contract §1). Each command loads the configuration once; a bad value stops it
// with a message naming the variable. Commands live one per file in ./commands/.
import { ConfigError } from '../core/config.ts';
import type { WardCommand } from './command.ts';
import { agentCommand } from './commands/agent.ts';
import { backupCommand, restoreCommand } from './commands/backup.ts';
import { clusterCommand } from './commands/cluster.ts';
import { consoleCommand } from './commands/console.ts';
import { federationCommand } from './commands/federation.ts';
import { gatewayCommand } from './commands/gateway.ts';
import { ledgerCommand } from './commands/ledger.ts';
import { keysCommand } from './commands/keys.ts';
import { mcpCommand } from './commands/mcp.ts';
import { migrateCommand } from './commands/migrate.ts';
import { registryCommand } from './commands/registry.ts';
import { startCommand } from './commands/start.ts';
import { tokenCommand } from './commands/token.ts';
import { trustCommand } from './commands/trust.ts';

const COMMANDS: readonly WardCommand[] = [startCommand, registryCommand, consoleCommand, migrateCommand, backupCommand, restoreCommand, keysCommand, ledgerCommand, gatewayCommand, agentCommand, tokenCommand, trustCommand, federationCommand, clusterCommand, mcpCommand];

function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length), 4) + 2;
  const lines = COMMANDS.map((c) => `  ${c.name.padEnd(width)} ${c.summary}`);
  return `Usage: ward <command> [options]\n\nCommands:\n${lines.join('\n')}\n  ${'help'.padEnd(width)} show this text\n\nConfiguration is read from the environment; see docs/configuration.md.`;
}

async function main(argv: string[]): Promise<number | 'running'> {
  const [name = 'help', ...args] = argv;
  if (name === 'help' || name === '--help' || name === '-h') {
    console.log(usage());
    return 0;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    console.error(`ward: unknown command "${name}"\n\n${usage()}`);
    return 2;
  }
  return command.run(args);
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 'running') process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof ConfigError) console.error(`ward: configuration error: ${error.message}`);
    else console.error('ward: failed:', error);
    process.exitCode = 1;
  },
);
