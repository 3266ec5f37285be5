/**
 * The container files stay true to each other and to Ward: the Containerfile's defaults (base, version,
 * licence, user, volume, entry point, health check) and its allow-list build context; the compose
 * trial's services, their settings loaded through Ward's own parsers, and its HAProxy configuration,
 * the one `ward cluster up` runs but for its addresses, passing `haproxy -c`. Building and running the
 * image is `npm run image:test` (scripts/image-test.ts).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { ConsoleConfigSchema, loadConsoleConfig } from '../../src/console/console-config.ts';
import { ConfigSchema, loadConfig } from '../../src/core/config.ts';
import { MeshConfigSchema, loadMeshConfig } from '../../src/mesh/mesh-config.ts';
import { haproxyConfig } from '../../src/service/cluster-up.ts';
import { packageProblems, type Lockfile, type PackageJson } from '../../scripts/image/image-contents.ts';
import { DEPLOY, PACKAGE } from '../helpers/deploy-files.ts';
import { REPO_ROOT } from '../helpers/ward-process.ts';

const HAPROXY = ['/usr/sbin/haproxy', '/usr/bin/haproxy'].find((path) => existsSync(path));
const COMPOSE_DIR = join(DEPLOY, 'compose');

/** The Containerfile's instructions, continuation lines joined, comments dropped. */
function instructions(): Array<{ op: string; rest: string; stage: number }> {
  const text = readFileSync(join(REPO_ROOT, 'Containerfile'), 'utf8').replace(/\\\n/g, ' ');
  let stage = -1;
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const [op = '', ...rest] = line.split(/\s+/);
      if (op === 'FROM') stage += 1;
      return { op, rest: rest.join(' '), stage };
    });
}

/** Compose's own interpolation of the forms the file uses: ${NAME}, ${NAME:-default}, ${NAME:?error}. */
function interpolate(text: string, env: Record<string, string>): string {
  return text.replace(/\$\{(\w+)(?::([-?])([^}]*))?\}/g, (_whole, name: string, form?: string, word?: string) => {
    if (env[name]) return env[name];
    if (form === '-') return word ?? '';
    throw new Error(`compose would stop: ${name} is unset (${word ?? ''})`);
  });
}

const SECRETS = { POSTGRES_PASSWORD: 'trial-password', REGISTRY_API_KEY_SECRET: 'k'.repeat(40), MESH_JWT_SECRET: 'm'.repeat(40) };

function compose(env: Record<string, string> = SECRETS): { services: Record<string, any>; volumes: Record<string, unknown> } {
  return parse(interpolate(readFileSync(join(COMPOSE_DIR, 'compose.yaml'), 'utf8'), env), { merge: true });
}

describe('container files', () => {
  test("the Containerfile: the official Node 24 base, this version and licence, the ward user, the data volume, ward as entry point", () => {
    const all = instructions();
    const arg = (name: string) => all.find((i) => i.op === 'ARG' && i.rest.startsWith(`${name}=`))?.rest.slice(name.length + 1);
    assert.match(arg('BASE_IMAGE') ?? '', /^docker\.io\/library\/node:24-bookworm-slim$/);
    assert.deepEqual(all.filter((i) => i.op === 'FROM').map((i) => i.rest), ['${BASE_IMAGE} AS dependencies', '${BASE_IMAGE} AS runtime']);
    assert.equal(arg('WARD_VERSION'), PACKAGE.version, 'the version label follows package.json');
    const label = all.find((i) => i.op === 'LABEL')?.rest ?? '';
    assert.match(label, /org\.opencontainers\.image\.version="\$\{WARD_VERSION\}"/);
    assert.match(label, new RegExp(`org\\.opencontainers\\.image\\.licenses="${PACKAGE.license}"`));
    assert.match(label, /org\.opencontainers\.image\.source="\$\{SOURCE_URL\}"/);
    const runtime = all.filter((i) => i.stage === 1);
    // Production dependencies only, installed from the lockfile in the first stage; none installed at run time.
    assert.match(all.find((i) => i.stage === 0 && i.op === 'RUN')?.rest ?? '', /npm ci --omit=dev --ignore-scripts/);
    assert.ok(!runtime.some((i) => i.op === 'RUN' && /npm (ci|install)/.test(i.rest)), 'no npm install in the runtime stage');
    assert.match(runtime.find((i) => i.op === 'RUN')?.rest ?? '', /rm -rf \/usr\/local\/lib\/node_modules \/usr\/local\/bin\/npm/);
    assert.equal(runtime.find((i) => i.op === 'USER')?.rest, '10001:10001');
    assert.equal(runtime.find((i) => i.op === 'VOLUME')?.rest, '["/var/lib/ward"]');
    assert.equal(runtime.find((i) => i.op === 'ENV')?.rest, 'REGISTRY_DATA_DIR=/var/lib/ward');
    assert.equal(runtime.find((i) => i.op === 'ENTRYPOINT')?.rest, '["node", "/app/bin/ward.js"]');
    assert.match(runtime.find((i) => i.op === 'HEALTHCHECK')?.rest ?? '', /CMD \["node", "\/app\/deploy\/container\/healthcheck\.ts"\]$/);
    // Every COPY from the build context names a file that exists and that .dockerignore lets through.
    const allowed = readFileSync(join(REPO_ROOT, '.dockerignore'), 'utf8').split('\n').filter((line) => line.startsWith('!')).map((line) => line.slice(1).replace(/\/$/, ''));
    for (const copy of runtime.filter((i) => i.op === 'COPY' && !i.rest.startsWith('--from'))) {
      for (const source of copy.rest.split(' ').slice(0, -1)) {
        assert.ok(existsSync(join(REPO_ROOT, source)), `COPY ${source}: no such file`);
        assert.ok(allowed.includes(source.replace(/\/$/, '')), `COPY ${source}: not in .dockerignore's allow-list`);
      }
    }
  });

  test('.dockerignore lets only what the image runs into the build: no tests, docs, data, keys or .env', () => {
    const lines = readFileSync(join(REPO_ROOT, '.dockerignore'), 'utf8').split('\n').filter((line) => line && !line.startsWith('#'));
    assert.equal(lines[0], '*', 'it starts by leaving everything out');
    assert.deepEqual(lines.slice(1).sort(), ['!bin/', '!deploy/container/healthcheck.ts', '!package-lock.json', '!package.json', '!src/']);
  });

  test("image:test's node_modules check passes the production set and fails on a dev dependency, a stray or a missing package", () => {
    const lock = JSON.parse(readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as Lockfile;
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as PackageJson;
    // What `npm ci --omit=dev` installs: every lockfile entry not marked dev (optional ones for other platforms aside).
    const production = Object.entries(lock.packages)
      .filter(([path, entry]) => path.startsWith('node_modules/') && entry.dev !== true && !(entry as { optional?: boolean }).optional)
      .map(([path]) => path);
    assert.deepEqual(packageProblems(production, lock, pkg), []);
    assert.match(packageProblems([...production, 'node_modules/typescript'], lock, pkg).join('\n'), /dev dependencies in the image's node_modules: node_modules\/typescript/);
    assert.match(packageProblems([...production, 'node_modules/not-locked'], lock, pkg).join('\n'), /does not list: node_modules\/not-locked/);
    assert.match(packageProblems(production.filter((path) => path !== 'node_modules/fastify'), lock, pkg).join('\n'), /missing from the image: fastify/);
  });

  test('the compose trial: two registries, PostgreSQL, Redis, HAProxy, the gateway and the console, from the one image', () => {
    const { services, volumes } = compose();
    assert.deepEqual(Object.keys(services).sort(), ['console', 'gateway', 'haproxy', 'migrate', 'postgres', 'redis', 'registry-1', 'registry-2']);
    const ward = ['migrate', 'registry-1', 'registry-2', 'gateway', 'console'];
    for (const name of ward) {
      const service = services[name];
      assert.equal(service.image, `ward:${PACKAGE.version}`, `${name}: the image the Containerfile builds, tagged with this version`);
      assert.equal(service.user, '10001:10001', name);
      assert.equal(service.read_only, true, name);
      assert.deepEqual(service.cap_drop, ['ALL'], name);
      assert.deepEqual(service.command, [name.replace(/-\d$/, '')], name);
    }
    assert.equal(compose({ ...SECRETS, WARD_IMAGE: 'registry.example.org/ward:9.9.9' }).services.console.image, 'registry.example.org/ward:9.9.9');
    assert.throws(() => compose({}), /POSTGRES_PASSWORD is unset/, 'no default password: the trial needs one set');
    // Migrations first, as the Kubernetes Job; then the registries.
    for (const name of ['registry-1', 'registry-2']) {
      assert.deepEqual(services[name].depends_on.migrate, { condition: 'service_completed_successfully' });
      assert.equal(services[name].volumes[0].split(':')[1], '/var/lib/ward', `${name} keeps its data directory on a volume`);
    }
    assert.equal(services.gateway.volumes[0].split(':')[1], '/var/lib/ward', 'the gateway keeps MESH_DATA_DIR on a volume');
    // Published on this host's loopback only: the trial runs with authentication off.
    for (const [name, service] of Object.entries(services)) {
      for (const port of service.ports ?? []) assert.match(port, /^127\.0\.0\.1:/, name);
    }
    for (const volume of Object.values(services).flatMap((service) => service.volumes ?? [])) {
      const source = String(volume).split(':')[0] ?? '';
      if (!source.startsWith('.')) assert.ok(source in volumes, `${source} is a declared volume`);
    }
  });

  test("the compose trial's settings load through Ward's own parsers, the same for both registries", () => {
    const { services } = compose();
    const known = (schema: { properties: Record<string, unknown> }, env: Record<string, string>, what: string) => {
      for (const key of Object.keys(env)) assert.ok(key in schema.properties, `${what}: ${key} is not a setting`);
    };
    assert.deepEqual(services['registry-1'].environment, services['registry-2'].environment);
    assert.deepEqual(services.migrate.environment, services['registry-1'].environment);
    const registryEnv = services['registry-1'].environment as Record<string, string>;
    known(ConfigSchema, registryEnv, 'registry');
    const registry = loadConfig(registryEnv);
    assert.equal(registry.REGISTRY_HOST, '0.0.0.0');
    assert.equal(registry.DATABASE_URL, `postgres://ward:${SECRETS.POSTGRES_PASSWORD}@postgres:5432/ward`);
    assert.equal(services.postgres.environment.POSTGRES_PASSWORD, SECRETS.POSTGRES_PASSWORD);
    // HAProxy checks every 500 ms and takes an instance out after 2 failures: the drain outlasts that.
    assert.ok(registry.REGISTRY_SHUTDOWN_DRAIN_MS > 2 * 500);
    const gatewayEnv = services.gateway.environment as Record<string, string>;
    known(MeshConfigSchema, gatewayEnv, 'gateway');
    assert.equal(loadMeshConfig(gatewayEnv).MESH_DATA_DIR, '/var/lib/ward/mesh');
    const consoleEnv = services.console.environment as Record<string, string>;
    known(ConsoleConfigSchema, consoleEnv, 'console');
    const console = loadConsoleConfig(consoleEnv);
    assert.equal(console.REGISTRY_URL, 'http://haproxy:8080');
    assert.equal(console.openAccess, false, 'bound past loopback, the console asks for sign-in');
  });

  test("the compose trial's HAProxy is the one `ward cluster up` runs, in front of the two registry services, and passes haproxy -c", { skip: HAPROXY ? false : 'haproxy is not installed' }, () => {
    const text = readFileSync(join(COMPOSE_DIR, 'haproxy.cfg'), 'utf8');
    const settings = (config: string) =>
      config
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line && !line.startsWith('#') && !/^(bind|server|stats socket) /.test(line));
    assert.deepEqual(settings(text), settings(haproxyConfig(8080, ['registry:8080'], { statsSocket: '/var/lib/haproxy/ward.sock' })));
    const servers = [...text.matchAll(/^\s*server (\S+) (\S+) check$/gm)].map((match) => match[2]);
    const { services } = compose();
    assert.deepEqual(servers, ['registry-1', 'registry-2'].map((name) => `${name}:${services[name].environment.REGISTRY_PORT}`));
    assert.deepEqual(services.haproxy.volumes, ['./haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro']);
    assert.equal(services.haproxy.ports[0], '127.0.0.1:8080:8080');
    // The service names resolve only on compose's network: checked here with loopback addresses.
    const dir = mkdtempSync(join(tmpdir(), 'ward-compose-haproxy-'));
    try {
      writeFileSync(join(dir, 'haproxy.cfg'), text.replace(/registry-\d:/g, '127.0.0.1:'));
      const checked = spawnSync(HAPROXY as string, ['-c', '-f', join(dir, 'haproxy.cfg')], { encoding: 'utf8' });
      assert.equal(checked.status, 0, checked.stdout + checked.stderr);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
