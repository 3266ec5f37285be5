/**
 * One registry instance of `ward cluster up`, supervised (docs/operations.md, "Several instances"):
 * started on its own fixed port (the balancer's configuration names it), restarted when it dies with
 * a growing wait (1 s, 2 s, 4 s … at most 30 s), and given up after {@link MAX_FAILED_STARTS} starts in
 * a row that did not last: each death is logged with its exit code or signal and the last lines the
 * instance wrote to stderr. An instance that stayed up for {@link STABLE_AFTER_MS} starts its count
 * afresh.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createRegistryClient } from '../client/registry-client.ts';
import { stopRegistryProcess } from './federation-up.ts';

const WARD_CLI = fileURLToPath(new URL('../cli/ward.ts', import.meta.url));

/** Starts in a row that died before they had run {@link STABLE_AFTER_MS}: after this many the instance is left failed. */
export const MAX_FAILED_STARTS = 5;
export const STABLE_AFTER_MS = 60_000;
const READY_TIMEOUT_MS = 30_000;
const MAX_BACKOFF_MS = 30_000;

export type InstanceState = 'starting' | 'running' | 'restarting' | 'failed' | 'stopped';

export type InstanceStatus = {
  instance: number;
  port: number;
  url: string;
  state: InstanceState;
  pid: number | null;
  /** When the current process started (null while none runs). */
  started_at: string | null;
  restarts: number;
  last_exit: { code: number | null; signal: string | null; at: string; stderr: string } | null;
};

export type InstanceSpec = {
  /** 1-based, as the logs and `ward cluster status` name it. */
  index: number;
  port: number;
  /** The whole environment of the process. */
  env: Record<string, string>;
  log: (line: string) => void;
  /** Called after every change of state, for the status file. */
  onChange: () => void;
  /** Restart a dead instance (default true); off, a death is final, as before supervision. */
  supervise: boolean;
  /** The wait before the first restart, doubled for each start in a row that did not last (tests shorten it). */
  backoffMs?: number;
};

export class SupervisedInstance {
  readonly #spec: InstanceSpec;
  #process: ChildProcess | undefined;
  #state: InstanceState = 'starting';
  #startedAt: number | null = null;
  #restarts = 0;
  #failedStarts = 0;
  #lastExit: InstanceStatus['last_exit'] = null;
  #stderr = '';
  #restartTimer: NodeJS.Timeout | undefined;

  constructor(spec: InstanceSpec) {
    this.#spec = spec;
  }

  get url(): string {
    return `http://127.0.0.1:${this.#spec.port}`;
  }

  /** The running process (the latest one, after a restart). */
  get process(): ChildProcess {
    if (!this.#process) throw new Error(`instance ${this.#spec.index} has not been started`);
    return this.#process;
  }

  status(): InstanceStatus {
    return {
      instance: this.#spec.index,
      port: this.#spec.port,
      url: this.url,
      state: this.#state,
      pid: this.#process && this.#process.exitCode === null && this.#process.signalCode === null ? (this.#process.pid ?? null) : null,
      started_at: this.#startedAt === null ? null : new Date(this.#startedAt).toISOString(),
      restarts: this.#restarts,
      last_exit: this.#lastExit,
    };
  }

  /** Starts the process and waits until it answers ready; rejects (and stops it) when it does not. */
  async start(): Promise<void> {
    this.#spawn();
    await this.#waitReady();
  }

  /** Stops it for good: no restart follows. */
  async stop(): Promise<void> {
    this.#setState('stopped');
    clearTimeout(this.#restartTimer);
    if (this.#process) await stopRegistryProcess(this.#process);
  }

  #setState(state: InstanceState): void {
    this.#state = state;
    this.#spec.onChange();
  }

  #spawn(): void {
    this.#stderr = '';
    const child = spawn(process.execPath, [WARD_CLI, 'registry'], { env: this.#spec.env, stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (this.#stderr = (this.#stderr + chunk).slice(-4096)));
    // 'close', not 'exit': by then its stderr has been read to the end, last lines included.
    child.once('close', (code, signal) => this.#exited(child, code, signal));
    this.#process = child;
    this.#startedAt = Date.now();
    this.#setState('starting');
  }

  async #waitReady(): Promise<void> {
    const client = createRegistryClient({ baseUrl: this.url, userAgent: 'ward-cluster-up', timeoutMs: 1000, verifySignatures: false });
    const child = this.#process;
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (!child || child.exitCode !== null || child.signalCode !== null) throw new Error(`instance ${this.#spec.index} exited while starting: ${lastLines(this.#stderr)}`);
      if ((await client.readiness().catch(() => undefined))?.ok) {
        if (this.#state === 'starting') this.#setState('running');
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (child) await stopRegistryProcess(child);
    throw new Error(`instance ${this.#spec.index} was not ready within ${READY_TIMEOUT_MS} ms`);
  }

  #exited(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (child !== this.#process) return;
    const lasted = Date.now() - (this.#startedAt ?? Date.now());
    this.#lastExit = { code, signal, at: new Date().toISOString(), stderr: lastLines(this.#stderr) };
    this.#startedAt = null;
    if (this.#state === 'stopped') return this.#spec.onChange();
    const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    this.#spec.log(`instance ${this.#spec.index} ${how} after ${Math.round(lasted / 1000)} s${this.#lastExit.stderr ? `: ${this.#lastExit.stderr}` : ''}`);
    if (!this.#spec.supervise) return this.#setState('failed');
    this.#failedStarts = lasted >= STABLE_AFTER_MS ? 1 : this.#failedStarts + 1;
    if (this.#failedStarts > MAX_FAILED_STARTS) {
      this.#spec.log(`instance ${this.#spec.index}: ${MAX_FAILED_STARTS} restarts in a row did not last ${STABLE_AFTER_MS / 1000} s; left stopped (restart the cluster once the cause is fixed)`);
      return this.#setState('failed');
    }
    const wait = Math.min(MAX_BACKOFF_MS, (this.#spec.backoffMs ?? 1000) * 2 ** (this.#failedStarts - 1));
    this.#spec.log(`instance ${this.#spec.index}: restarting in ${wait / 1000} s (attempt ${this.#failedStarts} of ${MAX_FAILED_STARTS})`);
    this.#setState('restarting');
    this.#restartTimer = setTimeout(() => void this.#restart(), wait);
  }

  async #restart(): Promise<void> {
    if (this.#state !== 'restarting') return;
    this.#restarts += 1;
    this.#spawn();
    try {
      await this.#waitReady();
      this.#spec.log(`instance ${this.#spec.index}: back on ${this.url} (restart ${this.#restarts})`);
    } catch (error) {
      // The exit handler has scheduled the next try, or given up.
      if ((this.#state as InstanceState) === 'starting') this.#spec.log(`instance ${this.#spec.index}: ${(error as Error).message}`);
    }
  }
}

function lastLines(text: string): string {
  return text.trim().split('\n').slice(-3).join(' ').slice(0, 600);
}
