/**
 * `ward backup` and `ward restore` as real processes against the embedded database: an online backup
 * taken while the registry serves, restored after later changes, gives back the same signing keys,
 * the agents of that moment and a ledger that verifies. Refused: a backup over an existing file, a
 * restore of something that is not a Ward database, a restore under a running registry, PostgreSQL
 * (which has pg_dump).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { loadConfig } from '../../src/core/config.ts';
import { buildRegistry } from '../../src/registry/app.ts';
import { registerOverHttp } from '../helpers/listening.ts';
import { runWard } from '../helpers/ward-process.ts';

function tempDir(t: TestContext, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function startOn(dataDir: string) {
  const app = await buildRegistry({ config: loadConfig({ REGISTRY_DATA_DIR: dataDir, REGISTRY_HEALTH_PROBES: 'false', REGISTRY_ENV: 'test' }), logger: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const baseUrl = app.ward.baseUrl();
  return {
    baseUrl,
    close: async () => {
      app.server.closeAllConnections();
      await app.close();
    },
    kids: async () => ((await (await fetch(`${baseUrl}/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] }).keys.map((key) => key.kid).sort(),
    agentCount: async () => ((await (await fetch(`${baseUrl}/v1/agents?limit=1`)).json()) as { total_count: number }).total_count,
  };
}

describe('ward backup and ward restore', () => {
  test('an online backup restores the keys, the agents of that moment and a verifiable ledger', async (t) => {
    const dataDir = tempDir(t, 'ward-data-');
    const backups = tempDir(t, 'ward-backups-');
    const file = join(backups, 'ward.sqlite');
    const env = { REGISTRY_DATA_DIR: dataDir };

    const first = await startOn(dataDir);
    for (let i = 0; i < 3; i += 1) await registerOverHttp(first.baseUrl, `Before backup ${i}`);
    const kids = await first.kids();
    const backedUp = await runWard(t, ['backup', file], env);
    assert.equal(backedUp.code, 0, backedUp.stderr);
    assert.match(backedUp.stdout, /3 agents, \d+ ledger entries, \d+ signing keys, \d+ of \d+ migrations; integrity ok/);

    const again = await runWard(t, ['backup', file], env);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /exists; choose another name or pass --force/);

    await registerOverHttp(first.baseUrl, 'After backup');
    assert.equal(await first.agentCount(), 4);
    const inUse = await runWard(t, ['restore', file], env);
    assert.equal(inUse.code, 1);
    assert.match(inUse.stderr, /looks in use .* stop the registry first/);
    await first.close();

    const restored = await runWard(t, ['restore', file], env);
    assert.equal(restored.code, 0, restored.stderr);
    assert.match(restored.stdout, /^restored .*: 3 agents/);

    const second = await startOn(dataDir);
    t.after(second.close);
    assert.deepEqual(await second.kids(), kids, 'the same signing keys');
    assert.equal(await second.agentCount(), 3, 'the agents of the backup');
    const verified = await runWard(t, ['ledger', 'verify', '--url', second.baseUrl, '--full']);
    assert.equal(verified.code, 0, verified.stdout + verified.stderr);
    assert.doesNotMatch(verified.stdout, /FAIL/);
  });

  test('refusals: usage, a file that is not a Ward database, a missing file, PostgreSQL', async (t) => {
    const dataDir = tempDir(t, 'ward-data-');
    const env = { REGISTRY_DATA_DIR: dataDir };
    const usage = await runWard(t, ['backup'], env);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /name the backup file/);
    const help = await runWard(t, ['restore', '--help'], env);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^Usage: ward restore <file>/);

    const junk = join(tempDir(t, 'ward-junk-'), 'junk.sqlite');
    writeFileSync(junk, 'not a database at all'.repeat(100));
    const refused = await runWard(t, ['restore', junk], env);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /cannot be restored/);
    const missing = await runWard(t, ['restore', join(dataDir, 'nope.sqlite')], env);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /there is no file at/);

    const postgres = await runWard(t, ['backup', join(dataDir, 'x')], { DATABASE_URL: 'postgres://root@127.0.0.1:5432/test', DATABASE_SCHEMA: 'ward_backup_probe' });
    assert.equal(postgres.code, 2);
    assert.match(postgres.stderr, /uses PostgreSQL.*\n\s+pg_dump --format=custom --no-owner --schema=ward_backup_probe/);
  });
});

describe('backups on PostgreSQL: pg_dump and pg_restore as docs/operations.md gives them', { skip: process.env.TEST_DATABASE_URL ? false : 'needs TEST_DATABASE_URL' }, () => {
  test('a dumped and restored schema starts with the same keys and agents, and its ledger verifies', async (t) => {
    const url = process.env.TEST_DATABASE_URL as string;
    const schema = `ward_dump_${Date.now().toString(36)}`;
    const dumps = tempDir(t, 'ward-dump-');
    const file = join(dumps, 'ward.dump');
    const config = loadConfig({ DATABASE_URL: url, DATABASE_SCHEMA: schema, REGISTRY_HEALTH_PROBES: 'false', REGISTRY_ENV: 'test' });
    const psql = (sql: string) => execFileSync('psql', [url, '-v', 'ON_ERROR_STOP=1', '-Atc', sql]);
    t.after(() => psql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));

    const first = await buildRegistry({ config, logger: false });
    await first.listen({ port: 0, host: '127.0.0.1' });
    for (let i = 0; i < 2; i += 1) await registerOverHttp(first.ward.baseUrl(), `Dumped ${i}`);
    const kids = ((await (await fetch(`${first.ward.baseUrl()}/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] }).keys.map((key) => key.kid);
    execFileSync('pg_dump', ['--format=custom', '--no-owner', `--schema=${schema}`, `--file=${file}`, url]);
    first.server.closeAllConnections();
    await first.close();

    psql(`DROP SCHEMA "${schema}" CASCADE`);
    execFileSync('pg_restore', ['--no-owner', `--dbname=${url}`, file]);
    const second = await buildRegistry({ config, logger: false });
    await second.listen({ port: 0, host: '127.0.0.1' });
    t.after(async () => {
      second.server.closeAllConnections();
      await second.close();
    });
    const base = second.ward.baseUrl();
    assert.deepEqual(((await (await fetch(`${base}/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] }).keys.map((key) => key.kid), kids);
    assert.equal(((await (await fetch(`${base}/v1/agents?limit=1`)).json()) as { total_count: number }).total_count, 2);
    const verified = await runWard(t, ['ledger', 'verify', '--url', base, '--full']);
    assert.equal(verified.code, 0, verified.stdout + verified.stderr);
  });
});
