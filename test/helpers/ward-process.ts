import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { eventually } from './eventually.ts';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const WARD_CLI = join(REPO_ROOT, 'src', 'cli', 'ward.ts');
export const WARD_BIN = join(REPO_ROOT, 'bin', 'ward.js');

/**
 * A safety net: a command that should exit but starts serving instead fails rather than hangs. Far
 * above a real run: `ward start --help` loads the whole service before it prints its usage (about 9 s
 * on a busy two-core machine, several at once in the help test), and a net a busy machine can reach
 * tests the machine, not the command.
 */
const COMMAND_TIMEOUT_MS = 120_000;

export type CommandResult = { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string };

/** The environment of this process without any Ward setting, so only what a test sets applies. */
export function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (/^(REGISTRY_|DATABASE_|REDIS_|MESH_|CONSOLE_|GATEWAY_)/.test(key)) continue;
    env[key] = value;
  }
  return env;
}

/** Runs a script with this Node (24) as a real child process, in a clean environment plus `env`. */
export function runScript(
  t: Pick<TestContext, 'after'>,
  script: string,
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<CommandResult> {
  const child = spawn(process.execPath, [script, ...args], {
    cwd: REPO_ROOT,
    env: { ...cleanEnv(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), COMMAND_TIMEOUT_MS);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** `ward <args>` as a real child process. */
export const runWard = (t: Pick<TestContext, 'after'>, args: readonly string[], env?: Record<string, string>) =>
  runScript(t, WARD_CLI, args, env);

/** Whether any process of the group `pgid` is still alive (a detached `npm start` and all it started). */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Waits until no process of the group `pgid` is alive; `timeoutMs` is a safety net (then false, and
 * the caller says what still runs), not an assertion on how long stopping takes.
 */
export function groupExited(pgid: number, timeoutMs: number): Promise<boolean> {
  return eventually(() => (groupAlive(pgid) ? undefined : true), `process group ${pgid} to exit`, timeoutMs, 100).catch(() => false);
}
