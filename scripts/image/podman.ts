/**
 * Podman as `npm run image:test` runs it: as root, with runc, the cgroupfs manager and no default
 * ulimits (crun cannot set limits on these machines), from a containers.conf this script writes under
 * .tmp/ and names in CONTAINERS_CONF, so nothing of the machine's own configuration is changed.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const CONTAINERS_CONF = `# Written by scripts/image/podman.ts for npm run image:test.
[containers]
default_ulimits = []

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
# No journald or systemd here: events go to a file.
events_logger = "file"
`;

/** The environment podman runs in: this process's, with CONTAINERS_CONF naming the file written under `dir`. */
export function podmanEnvironment(dir: string): NodeJS.ProcessEnv {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'containers.conf');
  writeFileSync(file, CONTAINERS_CONF);
  return { ...process.env, CONTAINERS_CONF: file };
}

export class PodmanError extends Error {
  readonly status: number | null;
  constructor(args: readonly string[], status: number | null, output: string) {
    super(`podman ${args.join(' ')} exited ${status}: ${output.trim().split('\n').slice(-20).join('\n')}`);
    this.status = status;
  }
}

export type Podman = {
  /** Runs podman and returns its standard output; throws PodmanError when it fails. */
  (args: readonly string[], options?: { input?: string }): string;
  /** The same, answering the exit status and both outputs instead of throwing. */
  try(args: readonly string[]): { status: number | null; stdout: string; stderr: string };
  /** Runs podman with its output passed through (long steps: a build), resolving on success. */
  stream(args: readonly string[], stdin?: NodeJS.ReadableStream): Promise<void>;
  env: NodeJS.ProcessEnv;
};

export function createPodman(env: NodeJS.ProcessEnv): Podman {
  const attempt = (args: readonly string[], input?: string) => {
    const run = spawnSync('podman', args, { env, encoding: 'utf8', input, maxBuffer: 64 * 1024 * 1024 });
    if (run.error) throw run.error;
    return { status: run.status, stdout: run.stdout, stderr: run.stderr };
  };
  const podman = ((args: readonly string[], options: { input?: string } = {}) => {
    const run = attempt(args, options.input);
    if (run.status !== 0) throw new PodmanError(args, run.status, run.stderr + run.stdout);
    return run.stdout;
  }) as Podman;
  podman.try = (args) => attempt(args);
  podman.env = env;
  podman.stream = (args, stdin) =>
    new Promise((resolve, reject) => {
      const child = spawn('podman', args, { env, stdio: [stdin ? 'pipe' : 'ignore', 'inherit', 'inherit'] });
      if (stdin && child.stdin) stdin.pipe(child.stdin);
      child.once('error', reject);
      child.once('close', (status) => (status === 0 ? resolve() : reject(new PodmanError(args, status, '(output above)'))));
    });
  return podman;
}

/** Whether podman is installed at all. */
export function podmanInstalled(): boolean {
  return spawnSync('podman', ['--version'], { encoding: 'utf8' }).status === 0;
}
