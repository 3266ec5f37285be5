/**
 * Every fenced shell block of README.md and docs/ works as pasted (issue 46). Each block carries a
 * marker comment on the line before its fence:
 *
 *   <!-- example: run; shows: <text> | <text>; creates: <file> -->   run against a fresh `npm start`
 *   <!-- example: run with federation; shows: … -->                   run against `ward federation up`
 *   <!-- example: skip: <reason> -->                                   not run, and why
 *
 * A block without a marker, or a skip without a reason, fails the first test, so a new example is
 * decided when it is written. The runnable blocks run in the documents' order, one after another,
 * in `bash -e` from the repository's root, with the system's Node.js (20 here) first on the PATH, as a
 * newcomer's shell has it (`npx` and `npm` bring the pinned 24 for Ward's own commands). Each must
 * exit 0 and print every `shows` text; a `creates` file must exist (and is removed). The services get
 * free ports, not 8080, 8100, 3000 and 8180–8182, which other programs on a shared machine may hold:
 * those numbers are replaced in the block and in its `shows` texts, and `REGISTRY_URL` names the
 * registry for programs a block runs (examples/ default to http://127.0.0.1:8080); nothing else changes.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { groupAlive, groupExited, REPO_ROOT } from '../helpers/ward-process.ts';

type Marker = { kind: 'run' | 'skip'; setup: 'npm-start' | 'federation'; shows: string[]; creates: string[]; reason: string };
type Block = { where: string; body: string; marker: Marker | undefined; raw: string | undefined };

const MARKER = /<!-- example: (.*?) -->\n$/;

function parseMarker(text: string): Marker | undefined {
  if (text.startsWith('skip:')) return { kind: 'skip', setup: 'npm-start', shows: [], creates: [], reason: text.slice('skip:'.length).trim() };
  const [head = '', ...clauses] = text.split(';').map((part) => part.trim());
  if (head !== 'run' && head !== 'run with federation') return undefined;
  const clause = (name: string) => clauses.find((part) => part.startsWith(`${name}:`))?.slice(name.length + 1).split(' | ').map((item) => item.trim()).filter(Boolean) ?? [];
  return { kind: 'run', setup: head === 'run' ? 'npm-start' : 'federation', shows: clause('shows'), creates: clause('creates'), reason: '' };
}

function shellBlocks(): Block[] {
  const files = ['README.md', ...readdirSync(join(REPO_ROOT, 'docs')).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`)];
  return files.flatMap((file) => {
    const text = readFileSync(join(REPO_ROOT, file), 'utf8');
    return [...text.matchAll(/^```(?:sh|bash|shell)\n([\s\S]*?)^```/gm)].map((match) => {
      const before = text.slice(0, match.index);
      const raw = MARKER.exec(before)?.[1];
      return { where: `${file}:${before.split('\n').length}`, body: match[1] as string, raw, marker: raw === undefined ? undefined : parseMarker(raw) };
    });
  });
}

/** The PATH of a newcomer's shell: the system's Node.js first, none of the project's `node_modules/.bin`. */
function newcomerPath(): string {
  const rest = (process.env.PATH ?? '').split(delimiter).filter((dir) => dir !== '' && !dir.includes('node_modules') && dir !== '/usr/bin');
  return ['/usr/bin', ...rest].join(delimiter);
}

/** The environment of this process without Ward's own settings (and the test runner's), plus `extra`. */
function newcomerEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined || /^(REGISTRY_|DATABASE_|REDIS_|MESH_|CONSOLE_|GATEWAY_|MCP_|COMPUTER_USE_|NODE_TEST|NODE_OPTIONS|npm_)/.test(key)) continue;
    env[key] = value;
  }
  return { ...env, PATH: newcomerPath(), ...extra };
}

/** Starts a command in its own process group; resolves with the text it printed once `ready` matches it. Stopped (the whole group) when the test ends. */
async function startService(t: TestContext, command: string, args: string[], env: Record<string, string>, ready: RegExp): Promise<string> {
  const child = spawn(command, args, { cwd: REPO_ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const pgid = child.pid as number;
  t.after(async () => {
    if (groupAlive(pgid)) process.kill(-pgid, 'SIGINT');
    await groupExited(pgid, 15_000);
    if (groupAlive(pgid)) process.kill(-pgid, 'SIGKILL');
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${command} ${args.join(' ')} did not come up:\n${output}`)), 120_000);
    const seen = (chunk: Buffer) => {
      output += chunk.toString();
      if (ready.test(output)) {
        clearTimeout(timer);
        resolve(output);
      }
    };
    child.stdout.on('data', seen);
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${command} ${args.join(' ')} exited with ${code}:\n${output}`));
    });
  });
}

const portOf = (output: string, label: RegExp) => {
  const url = label.exec(output)?.[1];
  assert.ok(url, `no ${label} in:\n${output}`);
  return new URL(url).port;
};

/** Replaces the documented port numbers (as whole numbers) with the ones the services got. */
const withPorts = (text: string, ports: ReadonlyMap<string, string>) => text.replace(/\b(\d{4})\b/g, (number) => ports.get(number) ?? number);

async function runBlock(block: Block, ports: ReadonlyMap<string, string>, env: Record<string, string>): Promise<void> {
  const marker = block.marker as Marker;
  const script = withPorts(block.body, ports);
  const result = await new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn('bash', ['-e', '-c', script], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('close', (code) => resolve({ code, output }));
  });
  const context = `${block.where}\n--- block (ports replaced) ---\n${script}\n--- output ---\n${result.output.slice(-6000)}`;
  assert.equal(result.code, 0, `exit ${result.code}: ${context}`);
  for (const shown of marker.shows.map((text) => withPorts(text, ports))) assert.ok(result.output.includes(shown), `does not show ${JSON.stringify(shown)}: ${context}`);
  for (const file of marker.creates) {
    const path = join(REPO_ROOT, file);
    assert.ok(existsSync(path), `${block.where}: ${file} was not created`);
    if (file.endsWith('.png')) assert.equal(readFileSync(path).subarray(1, 4).toString(), 'PNG', `${block.where}: ${file} is not a PNG`);
    rmSync(path, { force: true });
  }
}

const BLOCKS = shellBlocks();
const runnable = (setup: Marker['setup']) => BLOCKS.filter((block) => block.marker?.kind === 'run' && block.marker.setup === setup);

describe('the shell examples of README.md and docs/', () => {
  test('every fenced shell block is marked: run (with what it shows), run with federation, or skipped with a reason', () => {
    assert.ok(BLOCKS.length >= 30, `only ${BLOCKS.length} blocks found`);
    const unmarked = BLOCKS.filter((block) => block.marker === undefined).map((block) => `${block.where}: ${block.raw === undefined ? 'no <!-- example: … --> marker' : `marker not understood: ${block.raw}`}`);
    assert.deepEqual(unmarked, []);
    const reasonless = BLOCKS.filter((block) => block.marker?.kind === 'skip' && block.marker.reason.length < 10).map((block) => block.where);
    assert.deepEqual(reasonless, [], 'a skipped block says why');
  });

  test('the system Node.js is first on the blocks\' PATH', () => {
    const version = spawnSync('node', ['--version'], { env: newcomerEnv({}), encoding: 'utf8' }).stdout.trim();
    assert.match(version, /^v\d+\./);
    assert.ok(Number(version.slice(1).split('.')[0]) >= 20, version);
  });

  test('against a fresh npm start, each runnable block exits 0 and shows what its text says', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'ward-examples-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const output = await startService(
      t,
      'npm',
      ['start'],
      newcomerEnv({ REGISTRY_DATA_DIR: join(dir, 'data'), MESH_DATA_DIR: join(dir, 'mesh'), REGISTRY_PORT: '0', GATEWAY_PORT: '0', CONSOLE_PORT: '0' }),
      /Mesh agents registered/,
    );
    const ports = new Map([
      ['8080', portOf(output, /Ward registry:\s+(http:\/\/\S+)/)],
      ['8100', portOf(output, /Mesh gateway:\s+(http:\/\/\S+)/)],
      ['3000', portOf(output, /Admin console:\s+(http:\/\/\S+)/)],
    ]);
    // The blocks' own commands (`npx ward keys create`…) use npm start's data, and programs that default
    // to http://127.0.0.1:8080 (examples/) are told the registry's port as the blocks' text is.
    const env = newcomerEnv({ REGISTRY_DATA_DIR: join(dir, 'data'), REGISTRY_URL: `http://127.0.0.1:${ports.get('8080')}` });
    const blocks = runnable('npm-start');
    assert.ok(blocks.length >= 6, `only ${blocks.length} runnable blocks`);
    for (const block of blocks) {
      t.diagnostic(`running ${block.where}`);
      await runBlock(block, ports, env);
    }
  });

  test('against ward federation up, the federation walk-through verifies the chain', async (t) => {
    const scratch = mkdtempSync(join(tmpdir(), 'ward-examples-federation-'));
    t.after(() => rmSync(scratch, { recursive: true, force: true }));
    const output = await startService(t, 'npx', ['ward', 'federation', 'up', '--base-port', '0'], newcomerEnv({ TMPDIR: scratch }), /Ctrl-C stops all three\./);
    const ports = new Map([
      ['8180', portOf(output, /^ {2}root +\S+ +(http:\/\/\S+)$/m)],
      ['8181', portOf(output, /^ {2}sovereign +\S+ +(http:\/\/\S+)$/m)],
      ['8182', portOf(output, /^ {2}organisation +\S+ +(http:\/\/\S+)$/m)],
    ]);
    const blocks = runnable('federation');
    assert.ok(blocks.length >= 1);
    for (const block of blocks) await runBlock(block, ports, newcomerEnv({}));
  });
});
