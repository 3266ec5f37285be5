// The child processes the benches measure (the registry, the bare baseline, the mesh gateway, the SDK server), each in its own process
// so the load generator and the server never share a thread.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { freePort } from '../src/core/http/free-port.ts';

const root = new URL('..', import.meta.url).pathname;

/** Runs `node <args>` and waits for the address it logs (`"url":"…"` or `listening on …`). */
export function startChild(args: string[], env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let buffer = '';
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString();
      const match = /"url":"(http:\/\/[^"]+)"/.exec(buffer) ?? /listening on (http:\/\/\S+)/.exec(buffer);
      if (!match) return;
      // From here on the output is drained unread, so the load generator spends nothing on it.
      child.stdout?.off('data', onData);
      child.stdout?.resume();
      resolve({ child, url: match[1] as string });
    };
    child.stdout?.on('data', onData);
    child.on('exit', (code) => reject(new Error(`child exited with ${code} before listening`)));
  });
}

/** `ward registry` at log level warn (no request lines, as the baselines log none), on a port chosen here. */
export async function startQuietRegistry(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  // BENCH_REGISTRY_NODE_ARGS (say `--cpu-prof --cpu-prof-dir=/tmp/prof`) profiles the registry alone.
  const nodeArgs = process.env.BENCH_REGISTRY_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...nodeArgs, 'src/cli/ward.ts', 'registry'], {
    cwd: root,
    env: { ...process.env, REGISTRY_HEALTH_PROBES: 'false', ...env, REGISTRY_PORT: String(port), REGISTRY_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let tries = 0; ; tries += 1) {
    if (child.exitCode !== null) throw new Error(`the registry exited with ${child.exitCode}`);
    if ((await fetch(`${url}/health`).catch(() => undefined))?.ok) return { child, url };
    if (tries > 300) throw new Error('the registry did not start');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Runs `node <args>` with its standard output appended to `logFile` (as the gateway does for its
 * agents; the load generator never reads it) and waits until `readyUrl` answers 200.
 */
export async function startLoggingChild(args: string[], env: Record<string, string>, readyUrl: string, logFile: string): Promise<ChildProcess> {
  const log = openSync(logFile, 'a');
  const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', log, 'inherit'] });
  closeSync(log);
  for (let tries = 0; ; tries += 1) {
    if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited with ${child.exitCode}`);
    if ((await fetch(readyUrl).catch(() => undefined))?.ok) return child;
    if (tries > 300) {
      child.kill('SIGKILL');
      throw new Error(`${args.join(' ')} did not answer ${readyUrl}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}
