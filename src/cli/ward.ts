#!/usr/bin/env node
// The `ward` command (contract §1). Each command loads the configuration once; a bad value stops it
// with a message naming the variable. Commands live one per file in ./commands/, loaded on use
// (command-index.ts).
import { ConfigError } from '../core/config-error.ts';
import { WARD_VERSION } from '../core/version.ts';
import { UsageError } from './command.ts';
import { COMMANDS } from './command-index.ts';

function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length), 4) + 2;
  const lines = COMMANDS.map((c) => `  ${c.name.padEnd(width)} ${c.summary}`);
  return `Usage: ward <command> [options]\n\nCommands:\n${lines.join('\n')}\n  ${'help'.padEnd(width)} show this text, or a command's: ward help <command> (or ward <command> --help)\n\nOptions: --version prints the version.\nConfiguration is read from the environment; see docs/configuration.md.`;
}

/** Whether the arguments ask for help (before any `--`, after which everything is an argument). */
function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}

async function main(argv: string[]): Promise<number | 'running'> {
  const [name = 'help', ...args] = argv;
  if (name === '--version' || name === '-V' || name === 'version') {
    console.log(`ward ${WARD_VERSION}`);
    return 0;
  }
  if (name === 'help' || name === '--help' || name === '-h') {
    const topic = args[0];
    // `ward help --help` asks for this same text.
    if (topic === undefined || topic === '--help' || topic === '-h') {
      console.log(usage());
      return 0;
    }
    const entry = COMMANDS.find((c) => c.name === topic);
    if (!entry) {
      console.error(`ward: no command "${topic}"\n\n${usage()}`);
      return 2;
    }
    console.log((await entry.load()).usage);
    return 0;
  }
  const entry = COMMANDS.find((c) => c.name === name);
  if (!entry) {
    console.error(`ward: unknown command "${name}"\n\n${usage()}`);
    return 2;
  }
  const command = await entry.load();
  // Help is answered here, before a command could start serving or touch storage.
  if (asksForHelp(args)) {
    console.log(command.usage);
    return 0;
  }
  if (command.takesArguments === false && args.length > 0) {
    console.error(`ward ${command.name}: unexpected ${args[0]?.startsWith('-') ? 'option' : 'argument'} "${args[0]}" (it takes none)\n\n${command.usage}`);
    return 2;
  }
  try {
    return await command.run(args);
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(error.message ? `ward ${command.name}: ${error.message}\n\n${command.usage}` : command.usage);
      return 2;
    }
    // node:util parseArgs refusing an option: one line naming it, then the usage.
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS')) {
      console.error(`ward ${command.name}: ${((error as Error).message.split('\n')[0] ?? '').replace(/\. To specify a positional argument.*$/, '')}\n\n${command.usage}`);
      return 2;
    }
    throw error;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 'running') process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof ConfigError) console.error(`ward: configuration error: ${error.message}`);
    else if ((error as { code?: unknown }).code === 'WARD_PORTS_IN_USE') console.error(`ward: ${(error as Error).message}`);
    else if ((error as { code?: unknown }).code === 'EADDRINUSE') console.error(`ward: ${addressInUse(error as { port?: number; address?: string })}`);
    else console.error(`ward: failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  },
);

/** The port variables and their defaults (docs/configuration.md), to name the one to change. */
const PORT_VARIABLES: readonly [string, number][] = [
  ['REGISTRY_PORT', 8080],
  ['CONSOLE_PORT', 3000],
  ['GATEWAY_PORT', 8100],
  ['MCP_PORT', 8090],
  ['AGENT_PORT', 0],
];

/** "Port in use" as a person can act on it: which port, and which variable moves it. */
function addressInUse(error: { port?: number; address?: string }): string {
  const port = error.port;
  const variable = PORT_VARIABLES.find(([name, fallback]) => Number(process.env[name] ?? fallback) === port)?.[0];
  const where = `port ${port ?? '?'} on ${error.address ?? 'this machine'} is already in use (another Ward, or another program)`;
  return variable ? `${where}: set ${variable} to a free port` : `${where}: choose another port`;
}
