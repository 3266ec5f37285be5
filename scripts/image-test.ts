// `npm run image:test`: builds the container image (Containerfile) on a base made here from Debian
// packages and runs it as an operator would: the registry on SQLite (a volume; restarted on it), the
// registry on PostgreSQL after `ward migrate` from the same image, the console and the gateway, the
// CLI; each with a read-only root file system, checked as a client would (scripts/image/). Reports
// the image's size and the time from `podman run` to a ready /readyz; fails on a dev dependency in the
// image. Exits non-zero on any failure; says SKIP (exit 0) only when Podman cannot run containers here.
// Options: --base <image> builds on that base instead of making one (e.g. the official Node image,
// where a registry is reachable); --keep keeps the images built.
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { buildBaseImage } from './image/base-image.ts';
import { inspectImage } from './image/image-contents.ts';
import { createPodman, podmanEnvironment, podmanInstalled, type Podman } from './image/podman.ts';
import { registryChecks, stillRegistered, waitUntilReady } from './image/registry-checks.ts';
import { REPO_ROOT, gitRevision, sourceUrl } from './image/source.ts';

const { values: options } = parseArgs({ options: { base: { type: 'string' }, keep: { type: 'boolean', default: false } } });
const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string; license: string };
const run = `${process.pid}`;
const BASE = options.base ?? `localhost/ward-base:node24-ci-${run}`;
const IMAGE = `localhost/ward:${pkg.version}-ci-${run}`;
const DATABASE_URL = process.env.IMAGE_TEST_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
const REDIS_URL = process.env.IMAGE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const SCHEMA = `ward_image_${run}`;
const READY_DEADLINE_MS = 120_000;
const started = Date.now();

const containers: string[] = [];
const volumes: string[] = [];
const report: string[] = [];
const say = (line: string) => console.log(`image:test: ${line}`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * A port free on loopback now. The containers share the host's network (they reach its PostgreSQL on
 * 127.0.0.1), so another process may take it before the container binds it: startServer then tries
 * again with another.
 */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Every container runs as Kubernetes runs it (deploy/kubernetes): read-only root, /tmp included, on the
 * host's loopback. `NO_DATA` leaves out the volume the image declares, as a pod that mounts none.
 */
const RUN = ['run', '--network', 'host', '--read-only', '--read-only-tmpfs=false', '--health-interval', 'disable'];
const NO_DATA = ['--image-volume', 'ignore'];

type Started = { url: string; readyMs: number };

/**
 * Starts `ward <args>` in the background on a free port (`flags(port)` sets it) and waits for its
 * /readyz; answers its URL and the time from `podman run` to ready. A port taken meanwhile (the
 * container stops with EADDRINUSE) is tried again with another, up to three times.
 */
async function startServer(podman: Podman, name: string, flags: (port: number) => string[], args: string[] = []): Promise<Started> {
  containers.push(name);
  for (let attempt = 1; ; attempt += 1) {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    podman.try(['rm', '--force', name]);
    const t0 = Date.now();
    podman([...RUN, '-d', '--name', name, ...flags(port), IMAGE, ...args]);
    let checkedAt = 0;
    const alive = () => {
      if (Date.now() - checkedAt < 1000) return true;
      checkedAt = Date.now();
      return podman(['inspect', '--format', '{{.State.Running}}', name]).trim() === 'true';
    };
    try {
      return { url, readyMs: await waitUntilReady(url, t0, READY_DEADLINE_MS, alive) };
    } catch (error) {
      const logs = podman.try(['logs', name]);
      if (attempt < 3 && /EADDRINUSE/.test(logs.stdout + logs.stderr)) continue;
      throw new Error(`${(error as Error).message}\n--- podman logs ${name}:\n${logs.stdout}${logs.stderr}`, { cause: error });
    }
  }
}

/** The process is not root, the root file system refuses writes (/tmp too), the data volume takes them, the health check passes. */
function containerChecks(podman: Podman, name: string, dataDir: string | null): void {
  const uid = podman(['exec', name, 'cat', '/proc/1/status']).match(/^Uid:\s+(\d+)/m)?.[1];
  if (uid === undefined || uid === '0') throw new Error(`${name}: the server runs as uid ${uid}, not as the ward user`);
  const script = `const fs = require('node:fs'); const out = {};
    for (const path of ${JSON.stringify(['/app/src/written', '/tmp/written', '/etc/written', '/written', ...(dataDir ? [`${dataDir}/written`] : [])])}) {
      try { fs.writeFileSync(path, 'x'); fs.rmSync(path); out[path] = 'written'; } catch (error) { out[path] = error.code; } }
    console.log(JSON.stringify(out));`;
  const writes = JSON.parse(podman(['exec', name, 'node', '-e', script])) as Record<string, string>;
  for (const [path, outcome] of Object.entries(writes)) {
    const expected = dataDir && path.startsWith(dataDir) ? 'written' : 'EROFS';
    if (outcome !== expected) throw new Error(`${name}: writing ${path} gave ${outcome}, expected ${expected}`);
  }
  const health = podman.try(['healthcheck', 'run', name]);
  if (health.status !== 0) throw new Error(`${name}: the image's HEALTHCHECK failed: ${health.stdout}${health.stderr}`);
  say(`  ${name}: uid ${uid}; writes: ${Object.entries(writes).map(([path, outcome]) => `${path} ${outcome}`).join(', ')}; HEALTHCHECK healthy`);
}

function stop(podman: Podman, name: string): number {
  const t0 = Date.now();
  podman(['stop', '--time', '30', name]);
  const code = podman(['inspect', '--format', '{{.State.ExitCode}}', name]).trim();
  if (code !== '0') throw new Error(`${name}: SIGTERM ended it with status ${code}, not 0\n${podman.try(['logs', name]).stderr}`);
  return Date.now() - t0;
}

async function sqliteRun(podman: Podman): Promise<void> {
  say('the registry on SQLite, its data on a volume (the default command: no arguments)');
  const volume = `ward-ci-${run}-data`;
  volumes.push(volume);
  podman(['volume', 'create', volume]);
  const flags = (port: number) => ['-v', `${volume}:/var/lib/ward`, '-e', 'REGISTRY_HOST=127.0.0.1', '-e', `REGISTRY_PORT=${port}`];
  const { url, readyMs } = await startServer(podman, `ward-ci-${run}-sqlite`, flags);
  report.push(`run → ready, SQLite, first start (new database, new signing key): ${seconds(readyMs)}`);
  const { checks, registered } = await registryChecks(url);
  for (const check of checks) say(`  ${check.name}: ${check.detail}`);
  containerChecks(podman, `ward-ci-${run}-sqlite`, '/var/lib/ward');
  await consoleAndGateway(podman, url);
  report.push(`SIGTERM → exited 0: ${seconds(stop(podman, `ward-ci-${run}-sqlite`))}`);
  const again = await startServer(podman, `ward-ci-${run}-sqlite-again`, flags, ['registry']);
  report.push(`run → ready, SQLite, restart on the same volume: ${seconds(again.readyMs)}`);
  const kept = await stillRegistered(again.url, registered);
  say(`  ${kept.name}, on the same volume: ${kept.detail}`);
  stop(podman, `ward-ci-${run}-sqlite-again`);
}

async function consoleAndGateway(podman: Podman, registryUrl: string): Promise<void> {
  // As console.yaml: no volume at all.
  await startServer(podman, `ward-ci-${run}-console`, (port) => [...NO_DATA, '-e', `CONSOLE_PORT=${port}`, '-e', `REGISTRY_URL=${registryUrl}`], ['console']);
  containerChecks(podman, `ward-ci-${run}-console`, null);
  // As gateway.yaml: its own volume at MESH_DATA_DIR only.
  const mesh = ['-v', '/var/lib/ward/mesh', '-e', 'MESH_DATA_DIR=/var/lib/ward/mesh'];
  const gateway = await startServer(podman, `ward-ci-${run}-gateway`, (port) => [...NO_DATA, ...mesh, '-e', `GATEWAY_PORT=${port}`], ['gateway']);
  containerChecks(podman, `ward-ci-${run}-gateway`, '/var/lib/ward/mesh');
  // Reading an agent's card starts the agent, a child process of the gateway, in the same read-only container.
  const card = await fetch(`${gateway.url}/rpc/consent/.well-known/agent-card.json`, { signal: AbortSignal.timeout(30_000) });
  const body = (await card.json()) as { name?: string };
  if (card.status !== 200 || !body.name) throw new Error(`the gateway's consent agent card: ${card.status} ${JSON.stringify(body)}\n${podman.try(['logs', `ward-ci-${run}-gateway`]).stdout}`);
  say(`  the gateway started its consent agent in the container: card "${body.name}"`);
  stop(podman, `ward-ci-${run}-console`);
  stop(podman, `ward-ci-${run}-gateway`);
  say('  the console and the gateway from the same image: ready, healthy, stopped by SIGTERM with status 0');
}

async function postgresRun(podman: Podman): Promise<void> {
  say(`the registry on PostgreSQL (schema ${SCHEMA}) and Redis, after \`ward migrate\` from the same image`);
  const env = ['-e', `DATABASE_URL=${DATABASE_URL}`, '-e', `DATABASE_SCHEMA=${SCHEMA}`, '-e', `REDIS_URL=${REDIS_URL}`];
  // As the ward-migrate Job: no volume.
  containers.push(`ward-ci-${run}-migrate`, `ward-ci-${run}-keys`);
  const migrated = podman([...RUN, ...NO_DATA, '--name', `ward-ci-${run}-migrate`, ...env, IMAGE, 'migrate']);
  say(`  ward migrate: ${migrated.trim().split('\n').pop()}`);
  const key = JSON.parse(podman([...RUN, ...NO_DATA, '--name', `ward-ci-${run}-keys`, ...env, IMAGE, 'keys', 'create', '--org', 'image-check', '--scopes', 'registry:read,registry:admin'])) as { key?: string; key_id?: string };
  if (!key.key_id) throw new Error(`ward keys create printed no key_id: ${JSON.stringify(key)}`);
  say(`  ward keys create: API key ${key.key_id} made offline from the image`);
  const name = `ward-ci-${run}-postgres`;
  const { url, readyMs } = await startServer(podman, name, (port) => [...env, '-e', 'REGISTRY_HOST=127.0.0.1', '-e', `REGISTRY_PORT=${port}`], ['registry']);
  report.push(`run → ready, PostgreSQL (migrated): ${seconds(readyMs)}`);
  for (const check of (await registryChecks(url)).checks) say(`  ${check.name}: ${check.detail}`);
  containerChecks(podman, name, '/var/lib/ward');
  stop(podman, name);
}

async function dropSchema(): Promise<void> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
  } finally {
    await client.end();
  }
}

function cleanUp(podman: Podman): void {
  for (const name of containers) podman.try(['rm', '--force', '--volumes', name]);
  for (const volume of volumes) podman.try(['volume', 'rm', '--force', volume]);
  if (!options.keep) for (const image of options.base ? [IMAGE] : [IMAGE, BASE]) podman.try(['rmi', '--force', image]);
}

async function main(): Promise<number> {
  if (!podmanInstalled()) {
    say('SKIP: podman is not installed, so no container can run here (apt-get install podman runc mmdebstrap)');
    return 0;
  }
  const podman = createPodman(podmanEnvironment(join(REPO_ROOT, '.tmp', 'podman')));
  process.once('SIGINT', () => {
    cleanUp(podman);
    void dropSchema().finally(() => process.exit(130));
  });
  try {
    if (!options.base) {
      say(`making the base image ${BASE} with mmdebstrap (Debian, Node ${process.version})`);
      const t0 = Date.now();
      await buildBaseImage(podman, BASE);
      report.push(`base image made: ${seconds(Date.now() - t0)}`);
    }
    if (podman.try(['image', 'exists', BASE]).status !== 0) throw new Error(`no base image ${BASE}`);
    const probe = podman.try([...RUN, '--rm', BASE, 'node', '--version']);
    if (probe.status !== 0) {
      const said = (probe.stderr || probe.stdout).trim();
      // Only the container runtime refusing (namespaces, cgroups, mounts) is "cannot run containers"; a base without Node is a failure.
      if (!/OCI runtime|runc|cgroup|namespace|not permitted|permission denied/i.test(said) || /not found|no such file/i.test(said)) throw new Error(`the base ${BASE} does not run node --version: ${said}`);
      say(`SKIP: Podman cannot run containers on this machine: ${said}`);
      return 0;
    }
    say(`building ${IMAGE} from the Containerfile on ${BASE}`);
    const t0 = Date.now();
    const revision = gitRevision();
    const source = sourceUrl();
    // The CA of a TLS-inspecting proxy on the way to the npm registry (these machines have one), lent to
    // `npm ci` alone: Node's extra CAs, else npm's own cafile setting (npm run passes it as npm_config_cafile).
    const ca = [process.env.NODE_EXTRA_CA_CERTS, process.env.npm_config_cafile].find((file) => file && existsSync(file));
    const secret = ca ? ['--secret', `id=npm_ca,src=${ca}`] : [];
    await podman.stream(['build', '--format', 'docker', '--network', 'host', '--layers=false', '--file', join(REPO_ROOT, 'Containerfile'), '--build-arg', `BASE_IMAGE=${BASE}`, '--build-arg', `SOURCE_URL=${source}`, '--build-arg', `REVISION=${revision}`, ...secret, '--tag', IMAGE, REPO_ROOT]);
    report.push(`image built: ${seconds(Date.now() - t0)}`);
    const contents = inspectImage(podman, IMAGE, BASE, { version: pkg.version, license: pkg.license, source, revision });
    for (const line of contents.lines) say(`  ${line}`);
    report.push(...contents.report);
    const cli = podman([...RUN, '--rm', IMAGE, '--version']).trim();
    if (cli !== `ward ${pkg.version}`) throw new Error(`ward --version in the image said "${cli}"`);
    say(`  the CLI: ${cli}`);
    await sqliteRun(podman);
    await postgresRun(podman);
    say('PASS');
    return 0;
  } catch (error) {
    say(`FAIL: ${(error as Error).stack ?? String(error)}`);
    return 1;
  } finally {
    cleanUp(podman);
    await dropSchema().catch((error: unknown) => say(`could not drop the schema ${SCHEMA}: ${(error as Error).message}`));
    for (const line of [...report, `the whole run, clean-up included: ${seconds(Date.now() - started)}`]) say(`  ${line}`);
  }
}

process.exitCode = await main();
