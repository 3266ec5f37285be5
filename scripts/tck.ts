// `npm run tck`: the official A2A TCK (a third-party kit, run from where it lies: ../shared/a2a-tck,
// or TCK_KIT_DIR) against Ward's TCK agent, JSON-RPC transport, categories mandatory and capabilities,
// for two targets: `direct` (`ward agent tck` as a child process) and `gateway` (a gateway started here
// with the TCK agent's manifest, which starts the agent on first use, presenting it at the root of a
// listener of its own, GATEWAY_ROOT_LISTENERS: the kit reads the card at the root of the host). Prints
// `tck <target> <category>: N passed, N failed` per run and exits 1 when any test failed or a run did
// not finish, other than the tests judged wrong (JUDGED_WRONG: they are printed, and counted failed). Without the kit, or without a Python that has its packages (docs/conformance.md lists the
// Debian ones), it says "skipped" and exits 0. Nothing is written into the kit: no pytest cache, no
// bytecode; agents' data goes to a temp dir.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startGateway } from '../src/mesh/gateway/gateway-server.ts';
import { loadMeshConfig } from '../src/mesh/mesh-config.ts';
import { issueMeshToken } from '../src/mesh/runtime/auth.ts';
import { failedTests, JUDGED_WRONG, pytestCounts, type Outcome } from './tck-results.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const KIT = resolve(process.env.TCK_KIT_DIR ?? join(ROOT, '..', 'shared', 'a2a-tck'));
const CATEGORIES = ['mandatory', 'capabilities'] as const;
/** A whole category runs in well under a minute here; this bounds a hung run. */
const RUN_TIMEOUT_MS = Number(process.env.TCK_RUN_TIMEOUT_MS ?? 300_000);
const AGENT_START_TIMEOUT_MS = 20_000;
const CALLER = 'did:web:localhost:agents:a2a-tck';
const TCK_MANIFEST = join(ROOT, 'src/mesh/agents/tck/manifest.json');

/** Debian's python3 first: a python3 earlier on PATH may not see Debian's packages. */
function findPython(): string | undefined {
  for (const candidate of [process.env.TCK_PYTHON, '/usr/bin/python3', 'python3']) {
    if (!candidate) continue;
    const probe = spawnSync(candidate, ['-c', 'import pytest, pytest_asyncio, httpx, requests, jsonschema, yaml, dotenv'], { stdio: 'ignore' });
    if (probe.status === 0) return candidate;
  }
  return undefined;
}

type Agent = { child: ChildProcess; port: number };

/** `ward agent tck` on a free port; it reports the port over IPC once it listens. */
function startTckAgent(env: NodeJS.ProcessEnv): Promise<Agent> {
  const child = spawn(process.execPath, [join(ROOT, 'src/cli/ward.ts'), 'agent', 'tck'], { cwd: ROOT, env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolvePort, reject) => {
    const timer = setTimeout(() => reject(new Error('the TCK agent did not start in time')), AGENT_START_TIMEOUT_MS);
    child.once('exit', (code) => reject(new Error(`the TCK agent exited (${code}) before listening`)));
    child.on('message', (message: { type?: string; port?: number }) => {
      if (message.type !== 'ward-agent-listening' || typeof message.port !== 'number') return;
      clearTimeout(timer);
      resolvePort({ child, port: message.port });
    });
  });
}

/** SIGTERM, then SIGKILL if it has not exited within 5 s; resolves once it has. */
function stopAgent(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(kill);
      done();
    });
    child.kill('SIGTERM');
  });
}

function runKit(python: string, sutUrl: string, category: string, env: NodeJS.ProcessEnv): Promise<Outcome & { output: string }> {
  const args = ['run_tck.py', '--sut-url', sutUrl, '--category', category, '--transports', 'jsonrpc'];
  const child = spawn(python, args, { cwd: KIT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
  return new Promise((done) => {
    child.once('close', () => {
      clearTimeout(timer);
      done({ ...pytestCounts(output), output });
    });
  });
}

type Run = { python: string; kitEnv: NodeJS.ProcessEnv; baseEnv: NodeJS.ProcessEnv; dataDir: string };

/** Runs every category against `sutUrl`; returns the number of failures (a run that did not finish is one). */
async function runCategories(run: Run, target: string, sutUrl: string): Promise<number> {
  let failures = 0;
  for (const category of CATEGORIES) {
    const outcome = await runKit(run.python, sutUrl, category, run.kitEnv);
    const unfinished = outcome.finished ? '' : ' (the run did not finish: timed out or crashed)';
    console.log(`tck ${target} ${category}: ${outcome.passed} passed, ${outcome.failed} failed${unfinished}`);
    if (outcome.failed === 0 && outcome.finished) continue;
    const failed = failedTests(outcome.output);
    const judged = failed.filter((name) => (JUDGED_WRONG as readonly string[]).includes(name));
    if (judged.length > 0) console.log(`  judged wrong (docs/conformance.md), counted as failed: ${judged.join(', ')}`);
    // Failures pytest counted but did not name are not excused: only named, judged-wrong ones are.
    failures += outcome.failed - judged.length + (outcome.finished ? 0 : 1);
    if (process.env.TCK_VERBOSE === '1' || !outcome.finished) console.log(outcome.output);
    else for (const line of outcome.output.split('\n').filter((text) => /^(FAILED|E {2})/.test(text) || /^_{3,} .* _{3,}$/.test(text))) console.log(`  ${line}`);
  }
  return failures;
}

/** The TCK agent on its own, as `ward agent tck` runs it. */
async function direct(run: Run): Promise<number> {
  const env: NodeJS.ProcessEnv = { ...run.baseEnv, MESH_DATA_DIR: join(run.dataDir, 'direct'), AGENT_PORT: '0' };
  delete env.MESH_MANIFEST;
  delete env.AGENT_PUBLIC_URL;
  const agent = await startTckAgent(env);
  try {
    // `localhost`, not 127.0.0.1: the kit flags loopback addresses in a card as leaked internals (and allows localhost).
    return await runCategories(run, 'direct', `http://localhost:${agent.port}`);
  } finally {
    await stopAgent(agent.child);
  }
}

/**
 * The TCK agent behind a gateway (started on first use, as every agent), presented at the root of a
 * listener of its own (`GATEWAY_ROOT_LISTENERS`), where the kit looks for the card.
 */
async function throughGateway(run: Run): Promise<number> {
  const config = loadMeshConfig({
    ...run.baseEnv,
    MESH_HOST: 'localhost',
    MESH_MANIFEST: TCK_MANIFEST,
    MESH_DATA_DIR: join(run.dataDir, 'gateway'),
    GATEWAY_PORT: '0',
    GATEWAY_ROOT_LISTENERS: 'tck=0',
  });
  const gateway = await startGateway(config);
  try {
    const root = gateway.rootUrls.get('tck') as string;
    return await runCategories(run, 'gateway', root.replace(/\/$/, ''));
  } finally {
    await gateway.close();
  }
}

async function main(): Promise<number> {
  if (!existsSync(join(KIT, 'run_tck.py'))) {
    console.log(`tck: skipped: no kit or no Python (no kit at ${KIT}; set TCK_KIT_DIR)`);
    return 0;
  }
  const python = findPython();
  if (!python) {
    console.log('tck: skipped: no kit or no Python (no python3 with pytest, pytest-asyncio, httpx, requests, jsonschema, yaml, dotenv)');
    return 0;
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'ward-tck-'));
  const secret = randomBytes(32).toString('hex');
  const baseEnv: NodeJS.ProcessEnv = {
    ...process.env,
    REGISTRY_ENV: 'development',
    MESH_JWT_SECRET: secret,
    MESH_HOST: '127.0.0.1',
    MESH_LOG_LEVEL: process.env.MESH_LOG_LEVEL ?? 'warn',
  };
  const token = await issueMeshToken({ secret, sub: CALLER, ttlSeconds: 1800 });
  const kitEnv = {
    ...process.env,
    A2A_AUTH_HEADERS: JSON.stringify({ Authorization: `Bearer ${token}`, 'X-Agent-ID': CALLER }),
    PYTEST_ADDOPTS: '-rfEs -p no:cacheprovider',
    PYTHONDONTWRITEBYTECODE: '1',
  };
  const run: Run = { python, kitEnv, baseEnv, dataDir };
  try {
    const targets = (process.env.TCK_TARGETS ?? 'direct,gateway').split(',');
    let failures = 0;
    if (targets.includes('direct')) failures += await direct(run);
    if (targets.includes('gateway')) failures += await throughGateway(run);
    return failures > 0 ? 1 : 0;
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

process.exitCode = await main();
