/**
 * `ward federation up` cleans up after itself (issue 46): the temporary data directory it made is
 * removed when Ctrl-C stops it; a `--dir` the caller gave is kept. The seeded sovereign organisation
 * is written "NHS England". Real processes (three registries each).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { cleanEnv, REPO_ROOT, WARD_CLI } from '../helpers/ward-process.ts';

/** Starts `ward federation up --base-port 0`, waits for its "Ctrl-C" line, and returns what it printed and a stop. */
async function federationUp(t: TestContext, args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [WARD_CLI, 'federation', 'up', '--base-port', '0', ...args], { cwd: REPO_ROOT, env: { ...cleanEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  await new Promise<void>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (stdout.includes('Ctrl-C stops all three.\n')) resolve();
    });
    void exited.then((code) => reject(new Error(`federation up exited (${code}) before it was up: ${stderr}`)));
  });
  const dataDir = /^Data: (\S+)/m.exec(stdout)?.[1];
  assert.ok(dataDir, stdout);
  const sovereignUrl = /^ {2}sovereign +\S+ +(\S+)$/m.exec(stdout)?.[1];
  assert.ok(sovereignUrl, stdout);
  return {
    dataDir,
    stdout,
    sovereignUrl,
    stop: async () => {
      child.kill('SIGINT');
      const code = await exited;
      return { code, signal: child.signalCode, stderr };
    },
  };
}

describe('ward federation up cleans up', () => {
  test('a temporary data directory is removed at Ctrl-C; a --dir is kept', async (t) => {
    const scratch = mkdtempSync(join(tmpdir(), 'ward-fed-cleanup-'));
    t.after(() => rmSync(scratch, { recursive: true, force: true }));
    // TMPDIR makes the temporary directory land where this test can see it.
    const temporary = await federationUp(t, [], { TMPDIR: scratch });
    assert.ok(temporary.dataDir.startsWith(scratch), temporary.dataDir);
    assert.ok(existsSync(temporary.dataDir));
    assert.match(temporary.stdout, /removed when it stops/);
    // The seeded organisation keeps its acronym.
    const owners = (await (await fetch(`${temporary.sovereignUrl}/fhir/Organization`)).json()) as any;
    assert.ok(owners.entry.some((entry: any) => entry.resource.name === 'NHS England'), JSON.stringify(owners.entry.map((entry: any) => entry.resource.name)));
    const stoppedTemporary = await temporary.stop();
    assert.equal(stoppedTemporary.code, 0, JSON.stringify(stoppedTemporary));
    assert.equal(existsSync(temporary.dataDir), false, 'the temporary directory is gone');
    assert.deepEqual(readdirSync(scratch), []);

    const kept = join(scratch, 'kept');
    const given = await federationUp(t, ['--dir', kept], {});
    assert.equal(given.dataDir, kept);
    assert.doesNotMatch(given.stdout, /removed when it stops/);
    const stoppedGiven = await given.stop();
    assert.equal(stoppedGiven.code, 0, JSON.stringify(stoppedGiven));
    assert.ok(readdirSync(kept).length > 0, 'the --dir keeps its databases');
  });

  test('Ctrl-C while the registries start: they finish starting, then all stop, and the temporary directory goes', async (t) => {
    const scratch = mkdtempSync(join(tmpdir(), 'ward-fed-early-'));
    t.after(() => rmSync(scratch, { recursive: true, force: true }));
    const child = spawn(process.execPath, [WARD_CLI, 'federation', 'up', '--base-port', '0'], { cwd: REPO_ROOT, env: { ...cleanEnv(), TMPDIR: scratch }, stdio: ['ignore', 'pipe', 'pipe'] });
    t.after(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    let stdout = '';
    const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
    const rootUrl = await new Promise<string>((resolve) => {
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
        const url = /started root registry \S+ at (\S+)/.exec(stdout)?.[1];
        if (url) resolve(url);
      });
    });
    child.kill('SIGINT');
    assert.equal(await exited, 0);
    assert.deepEqual(readdirSync(scratch), [], 'the temporary directory is gone');
    await assert.rejects(fetch(`${rootUrl}/health`), 'the root registry was stopped, not left running');
  });
});
