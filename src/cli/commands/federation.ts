import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { federationUp } from '../../service/federation-up.ts';
import { argumentsAfter, UsageError, type WardCommand } from '../command.ts';

const USAGE = `Usage: ward federation up [--base-port <port>] [--dir <path>]

Starts three registry processes — a root, a sovereign registry for GB and an organisational
registry under it — registers each with its parent, seeds a few agents, and prints what to try
(docs/federation.md). Ctrl-C stops all three.
  --base-port  the root's port; the sovereign and the organisation take the next two
               (default 8180; 0 picks free ports)
  --dir        where the three SQLite databases live (default: a new temporary directory,
               removed when it stops; reusing a --dir keeps what was registered, with the same ports)

Example:
  npx ward federation up --base-port 9000`;

/** `ward federation up`: a real three-tier chain on this machine in one command. */
export const federationCommand: WardCommand = {
  name: 'federation',
  usage: USAGE,
  async run(args) {
    const { values } = parseArgs({ args: argumentsAfter('up', args), options: { 'base-port': { type: 'string', default: '8180' }, dir: { type: 'string' } }, strict: true });
    const basePort = Number(values['base-port']);
    if (!Number.isInteger(basePort) || basePort < 0 || basePort > 65533) throw new UsageError('--base-port must be 0 or a port up to 65533');
    // A temporary directory is this command's own: removed when it stops (or fails to start); --dir is kept.
    const temporary = values.dir === undefined;
    const options = { basePort, dataDir: values.dir ? resolve(values.dir) : mkdtempSync(resolve(tmpdir(), 'ward-federation-')) };
    const removeTemporary = () => {
      if (temporary) rmSync(options.dataDir, { recursive: true, force: true });
    };
    // Ctrl-C while the registries start: let them finish starting, then stop them all and clean up,
    // rather than die and leave them running.
    let interrupted = false;
    const onEarlySignal = () => {
      interrupted = true;
      console.error('ward federation: stopping once the registries have started…');
    };
    process.once('SIGINT', onEarlySignal);
    process.once('SIGTERM', onEarlySignal);
    let federation: Awaited<ReturnType<typeof federationUp>>;
    try {
      federation = await federationUp({ ...options, log: (line) => console.log(line) });
    } catch (error) {
      process.removeListener('SIGINT', onEarlySignal);
      process.removeListener('SIGTERM', onEarlySignal);
      removeTemporary();
      throw error;
    }
    let stopping = false;
    const stop = (code: number) => {
      if (stopping) return;
      stopping = true;
      federation.stop().then(() => {
        removeTemporary();
        process.exit(code);
      });
    };
    // The stopping handlers go in before the early ones come out: a signal never finds none (Node's default would kill this process alone).
    process.once('SIGINT', () => stop(0));
    process.once('SIGTERM', () => stop(0));
    process.removeListener('SIGINT', onEarlySignal);
    process.removeListener('SIGTERM', onEarlySignal);
    if (interrupted) stop(0);
    const [root, sovereign, organisation] = federation.tiers;
    if (!root || !sovereign || !organisation) throw new Error('the federation did not start');
    const anyAgent = federation.agents.organisation?.[0] ?? '';
    console.log(
      [
        '',
        'A three-tier federation is running:',
        `  root          ${root.registryId}  ${root.url}`,
        `  sovereign     ${sovereign.registryId}  ${sovereign.url}`,
        `  organisation  ${organisation.registryId}  ${organisation.url}`,
        `Data: ${options.dataDir}${temporary ? '  (a temporary directory, removed when it stops; --dir <path> keeps the data)' : ''}`,
        '',
        'Try:',
        `  curl -s '${root.url}/v1/discover?capability=triage.assess&federated=true'`,
        `  curl -s '${root.url}/.well-known/jwks.json' > anchor.json`,
        `  curl -s '${organisation.url}/v1/trust/bundle?subject=${encodeURIComponent(anyAgent)}' > bundle.json`,
        '  npx ward trust verify bundle.json --anchor anchor.json',
        '',
        'Ctrl-C stops all three.',
      ].join('\n'),
    );
    for (const tier of federation.tiers) {
      tier.process.once('exit', (code) => {
        if (stopping) return;
        console.error(`ward federation: the ${tier.tier} registry exited (${code}); stopping the others`);
        stop(1);
      });
    }
    return 'running';
  },
};
