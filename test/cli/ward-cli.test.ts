import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { loadConfig } from '../../src/core/config.ts';
import { MIGRATIONS } from '../../src/registry/storage/migrations/index.ts';
import { buildRegistry } from '../../src/registry/app.ts';
import { BACKENDS, openTestStorage } from '../helpers/registry.ts';
import { WARD_BIN, runScript, runWard } from '../helpers/ward-process.ts';

/** What `ward migrate` prints on an empty database: every migration, in name order. */
const APPLIED_ALL = [...Object.keys(MIGRATIONS).sort().map((name) => `pending: ${name} (${MIGRATIONS[name]?.phase ?? 'expand'})`), `applied: ${Object.keys(MIGRATIONS).sort().join(', ')}`].join('\n');

function freshDataDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'ward-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const ward = runWard;
const run = runScript;

function assertUsage(text: string): void {
  assert.match(text, /Usage: ward <command>/);
  for (const command of ['start', 'registry', 'migrate', 'help']) {
    assert.match(text, new RegExp(`^\\s+${command}\\s`, 'm'), `usage lists "${command}"`);
  }
}

describe('the ward command', () => {
  test('ward help exits 0 and prints every command', async (t) => {
    const result = await ward(t, ['help']);
    assert.equal(result.code, 0, result.stderr);
    assertUsage(result.stdout);
  });

  test('ward with no command prints the help and exits 0', async (t) => {
    const result = await ward(t, []);
    assert.equal(result.code, 0, result.stderr);
    assertUsage(result.stdout);
  });

  test('an unknown command exits 2 and names the command on stderr', async (t) => {
    const result = await ward(t, ['frobnicate']);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /unknown command "frobnicate"/);
    assertUsage(result.stderr);
    assert.equal(result.stdout, '');
  });

  test('bin/ward.js hands over to the CLI', async (t) => {
    const result = await run(t, WARD_BIN, ['help']);
    assert.equal(result.code, 0, result.stderr);
    assertUsage(result.stdout);
  });

  describe('a bad configuration stops ward registry with a message naming the variable', () => {
    const cases: { name: string; env: Record<string, string>; variable: string }[] = [
      { name: 'a port that is not a number', env: { REGISTRY_PORT: 'abc' }, variable: 'REGISTRY_PORT' },
      { name: 'a port out of range', env: { REGISTRY_PORT: '70000' }, variable: 'REGISTRY_PORT' },
      {
        name: 'the jurisdiction UK (not an ISO 3166-1 code)',
        env: { REGISTRY_JURISDICTION: 'UK' },
        variable: 'REGISTRY_JURISDICTION',
      },
      { name: 'an unknown log level', env: { REGISTRY_LOG_LEVEL: 'loud' }, variable: 'REGISTRY_LOG_LEVEL' },
      {
        name: 'a database URL that is not PostgreSQL',
        env: { DATABASE_URL: 'mysql://db/ward' },
        variable: 'DATABASE_URL',
      },
      {
        name: 'production with authentication disabled (the default)',
        env: { REGISTRY_ENV: 'production' },
        variable: 'REGISTRY_AUTH_MODE',
      },
    ];
    for (const { name, env, variable } of cases) {
      test(`${name} is refused naming ${variable}`, async (t) => {
        const result = await ward(t, ['registry'], { REGISTRY_DATA_DIR: freshDataDir(t), ...env });
        assert.equal(result.signal, null, `ward registry did not exit by itself; stdout: ${result.stdout}`);
        assert.equal(result.code, 1, result.stderr);
        assert.match(result.stderr, new RegExp(`configuration error: ${variable}\\b`));
        assert.doesNotMatch(result.stdout, /registry listening/);
      });
    }
  });

  test('ward start is refused in production with the default auth mode too', async (t) => {
    const result = await ward(t, ['start'], {
      REGISTRY_DATA_DIR: freshDataDir(t),
      REGISTRY_ENV: 'production',
    });
    assert.equal(result.signal, null, `ward start did not exit by itself; stdout: ${result.stdout}`);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /REGISTRY_AUTH_MODE/);
  });

  for (const backend of BACKENDS) {
    test(`[${backend}] ward migrate applies every migration once, then reports up to date`, async (t) => {
      // openTestStorage gives an empty database (it does not migrate) and removes it afterwards.
      const { env: storageEnv } = await openTestStorage(t, backend);
      const listed = await ward(t, ['migrate', '--pending'], storageEnv);
      assert.equal(listed.code, 0, listed.stderr);
      assert.equal(listed.stdout.trim(), APPLIED_ALL.split('\n').slice(0, -1).join('\n'), 'everything pending, nothing changed');
      const first = await ward(t, ['migrate'], storageEnv);
      assert.equal(first.code, 0, first.stderr);
      assert.equal(first.stdout.trim(), APPLIED_ALL);
      const second = await ward(t, ['migrate'], storageEnv);
      assert.equal(second.code, 0, second.stderr);
      assert.equal(second.stdout.trim(), 'up to date');
    });
  }

  test('ward migrate creates a data directory that does not exist yet', async (t) => {
    const dataDir = join(freshDataDir(t), 'nested', 'data');
    const result = await ward(t, ['migrate'], { REGISTRY_DATA_DIR: dataDir });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout.trim(), APPLIED_ALL);
  });
});

describe('ward keys create', () => {
  test('creates a working key offline and prints it once; bad input exits 2', async (t) => {
    const dir = freshDataDir(t);
    const env = { REGISTRY_DATA_DIR: dir };
    const created = await ward(t, ['keys', 'create', '--org', 'nhs-ops', '--tier', 'business', '--scopes', 'registry:read,registry:admin'], env);
    assert.equal(created.code, 0, created.stderr);
    const key = JSON.parse(created.stdout);
    assert.match(key.raw_key, /^rk_/);
    assert.deepEqual([key.org_id, key.tier, key.scopes], ['nhs-ops', 'business', ['registry:read', 'registry:admin']]);
    const app = await buildRegistry({ config: loadConfig({ REGISTRY_DATA_DIR: dir, REGISTRY_ENV: 'test' }), logger: false });
    t.after(() => app.close());
    const listed = await app.inject({ method: 'GET', url: '/v1/admin/billing/api-keys', headers: { authorization: `Bearer ${key.raw_key}` } });
    assert.equal(listed.statusCode, 200);
    assert.equal(JSON.parse(listed.body).api_keys[0].key_id, key.key_id);
    for (const args of [['keys', 'create'], ['keys', 'create', '--org', 'x', '--scopes', 'registry:everything'], ['keys', 'create', '--org', 'x', '--tier', 'gold']]) {
      const refused = await ward(t, args, env);
      assert.equal(refused.code, 2, args.join(' '));
      assert.match(refused.stderr, /Usage: ward keys create|unknown/);
    }
  });
});
