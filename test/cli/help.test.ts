/**
 * The `ward` command as a newcomer meets it: every command answers `--help` and `ward help <command>`
 * with its usage and an example and exits 0 without starting anything; `--version` prints the
 * version; an unknown option or a stray argument is one line naming it plus the usage, exit 2, never
 * a stack trace.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { describe, test } from 'node:test';
import { WARD_VERSION } from '../../src/core/version.ts';
import { runWard } from '../helpers/ward-process.ts';

const COMMANDS = ['start', 'registry', 'console', 'migrate', 'backup', 'restore', 'keys', 'ledger', 'gateway', 'agent', 'token', 'trust', 'federation', 'cluster', 'computer-use', 'mcp'];

describe('ward help, --help and --version', () => {
  test('a port in use is one line naming the variable to change, not a stack trace', async (t) => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise<void>((resolve) => taken.close(() => resolve())));
    const port = (taken.address() as { port: number }).port;
    const dir = mkdtempSync(join(tmpdir(), 'ward-port-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const result = await runWard(t, ['registry'], { REGISTRY_DATA_DIR: dir, REGISTRY_PORT: String(port), REGISTRY_LOG_LEVEL: 'warn' });
    assert.equal(result.code, 1);
    assert.equal(result.stderr.trim(), `ward: port ${port} on 127.0.0.1 is already in use (another Ward, or another program): set REGISTRY_PORT to a free port`);
  });

  test('every command answers --help and help <command> with its usage and an example, starting nothing', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'ward-help-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    // A data directory that does not exist: a command that touched storage would create it.
    const env = { REGISTRY_DATA_DIR: join(dir, 'never-created') };
    const general = await runWard(t, ['help'], env);
    assert.equal(general.code, 0);
    for (const name of COMMANDS) assert.match(general.stdout, new RegExp(`^  ${name} `, 'm'), name);

    // Four processes at a time: 45 at once on a 2-core machine under a parallel suite could take
    // longer than the helper's timeout to start, which would test the machine, not the command.
    const runs = COMMANDS.flatMap((name) => [[name, '--help'], [name, '-h'], ['help', name]].map((args) => ({ name, args })));
    const check = async ({ name, args }: { name: string; args: string[] }) => {
      const result = await runWard(t, args, env);
      assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stdout, new RegExp(`^Usage: ward ${name}\\b`), args.join(' '));
      assert.match(result.stdout, /\nExample:\n {2}\S/, `${args.join(' ')} shows an example`);
      assert.equal(result.stderr, '', args.join(' '));
    };
    for (let i = 0; i < runs.length; i += 4) await Promise.all(runs.slice(i, i + 4).map(check));
    assert.equal((await import('node:fs')).existsSync(env.REGISTRY_DATA_DIR), false, 'no command touched storage');
  });

  test('--version; unknown commands, options and arguments: one line and the usage, exit 2', async (t) => {
    const version = await runWard(t, ['--version']);
    assert.equal(version.code, 0);
    assert.equal(version.stdout.trim(), `ward ${WARD_VERSION}`);

    const cases: [string[], RegExp][] = [
      [['keys', 'create', '--bogus'], /^ward keys: Unknown option '--bogus'\n\nUsage: ward keys/],
      [['token', '--ttl'], /^ward token: Option '--ttl <value>' argument missing\n\nUsage: ward token/],
      [['registry', '--port', '9'], /^ward registry: unexpected option "--port" \(it takes none\)\n\nUsage: ward registry/],
      [['start', 'now'], /^ward start: unexpected argument "now" \(it takes none\)/],
      [['ledger', 'verify', '--nope'], /^ward ledger: Unknown option '--nope'/],
      [['mcp', '--transport', 'carrier-pigeon'], /^ward mcp: /],
      [['frobnicate'], /^ward: unknown command "frobnicate"/],
      [['help', 'frobnicate'], /^ward: no command "frobnicate"/],
    ];
    for (const [args, expected] of cases) {
      const result = await runWard(t, args);
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stdout}${result.stderr}`);
      assert.match(result.stderr, expected, args.join(' '));
      assert.doesNotMatch(result.stderr, /\n\s+at /, `${args.join(' ')} printed a stack trace`);
    }
  });

  test('ward help --help is the help; a bad setting names its variable and what it takes; an unreachable database names DATABASE_URL', async (t) => {
    const help = await runWard(t, ['help', '--help']);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /^Usage: ward <command>/);

    const dir = mkdtempSync(join(tmpdir(), 'ward-messages-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const settings: Array<[Record<string, string>, string]> = [
      [{ REGISTRY_AUTH_MODE: 'bogus' }, 'ward: configuration error: REGISTRY_AUTH_MODE: invalid value: must be one of disabled, jwt, mtls, dpop (got "bogus")'],
      [{ REGISTRY_ENV: 'staging' }, 'ward: configuration error: REGISTRY_ENV: invalid value: must be one of development, production, test (got "staging")'],
      [{ REGISTRY_PORT: '99999' }, 'ward: configuration error: REGISTRY_PORT: invalid value: must be a whole number from 0 to 65535'],
      [{ REGISTRY_HEALTH_PROBES: 'yes' }, 'ward: configuration error: REGISTRY_HEALTH_PROBES: invalid value: must be true or false'],
      [
        { DATABASE_URL: 'postgres://ward:secret@127.0.0.1:1/ward' },
        'ward: configuration error: DATABASE_URL: PostgreSQL could not be reached at 127.0.0.1:1, database ward, user ward: nothing listens there (is PostgreSQL running, on that port?)',
      ],
    ];
    for (const [env, expected] of settings) {
      const result = await runWard(t, ['registry'], { REGISTRY_DATA_DIR: dir, ...env });
      assert.equal(result.code, 1, JSON.stringify(env));
      assert.equal(result.stderr.trim(), expected);
      assert.doesNotMatch(result.stderr, /secret/);
    }
  });
});

describe('ward start checks its ports before starting anything', () => {
  test('every busy port is named at once, with its variable, and nothing is created', async (t) => {
    const taken = await Promise.all([0, 1, 2].map(async () => {
      const server = createServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
      return (server.address() as { port: number }).port;
    }));
    const [registryPort, consolePort, gatewayPort] = taken as [number, number, number];
    const dir = mkdtempSync(join(tmpdir(), 'ward-ports-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const env = { REGISTRY_DATA_DIR: join(dir, 'never-created'), REGISTRY_LOG_LEVEL: 'warn', MESH_DATA_DIR: join(dir, 'mesh-never-created') };
    const all = await runWard(t, ['start'], { ...env, REGISTRY_PORT: String(registryPort), CONSOLE_PORT: String(consolePort), GATEWAY_PORT: String(gatewayPort) });
    assert.equal(all.code, 1);
    assert.equal(
      all.stderr.trim(),
      `ward: ports already in use (another Ward, or another program): ${registryPort} on 127.0.0.1 (REGISTRY_PORT), ${consolePort} on 127.0.0.1 (CONSOLE_PORT), ${gatewayPort} on 127.0.0.1 (GATEWAY_PORT); set REGISTRY_PORT, CONSOLE_PORT and GATEWAY_PORT to free ports`,
    );
    assert.equal(all.stdout, '', 'nothing started, so no URLs printed');
    assert.equal(existsSync(join(dir, 'never-created')), false, 'storage was not opened');
    // One busy port among free ones (0: any free port): the single-port message.
    const one = await runWard(t, ['start'], { ...env, REGISTRY_PORT: '0', CONSOLE_PORT: String(consolePort), GATEWAY_PORT: '0' });
    assert.equal(one.code, 1);
    assert.equal(one.stderr.trim(), `ward: port ${consolePort} on 127.0.0.1 is already in use (another Ward, or another program): set CONSOLE_PORT to a free port`);
  });
});
