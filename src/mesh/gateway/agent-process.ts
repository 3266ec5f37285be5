import { spawn, type ChildProcess } from 'node:child_process';
import type { GatewayAgentStatus } from '../../contract/gateway-status.ts';
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Clock } from '../../core/clock.ts';
import { MeshRpcError } from '../runtime/mesh-errors.ts';
import { readLogTail, startFailureCause } from './log-tail.ts';
import type { ManifestAgent } from './manifest.ts';

/** Where a supervised agent is in its life; `backoff` waits before restarting a crashed one. */
export type AgentProcessState = 'stopped' | 'starting' | 'running' | 'stopping' | 'backoff' | 'failed';

export type AgentProcessOptions = {
  readonly agent: ManifestAgent;
  /** The command line of a child: `[execPath, ...args]` (default `node src/cli/ward.ts agent <alias>`). */
  readonly command: readonly [string, ...string[]];
  /** The child's environment, computed at each start. */
  readonly env: () => Readonly<Record<string, string>>;
  readonly host: string;
  readonly logFile: string;
  readonly startTimeoutMs: number;
  readonly backoffMs: number;
  readonly backoffMaxMs: number;
  readonly clock: Clock;
  /** Told about every state change (the gateway logs them). */
  readonly onEvent?: (event: { alias: string; state: AgentProcessState; detail?: Record<string, unknown> }) => void;
};

/** What `/health` shows about one agent: the wire shape, and what the gateway keeps besides. */
export type AgentProcessSnapshot = GatewayAgentStatus & {
  state: AgentProcessState;
  active_streams: number;
  log_file: string;
  log_tail: string[];
};

const STOP_GRACE_MS = 5_000;
const HEALTH_POLL_MS = 50;

/**
 * One agent as a real child process (`ward agent <alias>`): started at most once however many
 * callers ask at the same time, ready once it reports its port (IPC) and `/health` answers 200,
 * restarted with exponential back-off when it crashes, its output appended to its own log file.
 */
export class AgentProcess {
  readonly alias: string;
  readonly #options: AgentProcessOptions;
  #state: AgentProcessState = 'stopped';
  #child: ChildProcess | undefined;
  #port: number | undefined;
  #ready: Promise<string> | undefined;
  #exited: Promise<void> = Promise.resolve();
  #cancelBackoff: (() => void) | undefined;
  #runningSince = 0;
  #lastStartAt = 0;
  #lastPid: number | null = null;
  #nextAttemptAt = 0;
  #starts = 0;
  #restarts = 0;
  /** Failed starts and crashes since a long healthy run: the back-off grows with it. */
  #failures = 0;
  /** Failures since the last successful start: what /health reports. */
  #consecutiveFailures = 0;
  #lastExit: AgentProcessSnapshot['last_exit'] = null;
  #lastError: string | null = null;
  #lastUsedAt = 0;
  #activeStreams = 0;

  constructor(options: AgentProcessOptions) {
    this.#options = options;
    this.alias = options.agent.alias;
  }

  get state(): AgentProcessState {
    return this.#state;
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  get lastUsedAt(): number {
    return this.#lastUsedAt;
  }

  get activeStreams(): number {
    return this.#activeStreams;
  }

  /** The agent's base URL while it runs. */
  get url(): string | undefined {
    return this.#state === 'running' && this.#port !== undefined ? `http://${this.#options.host}:${this.#port}` : undefined;
  }

  #now(): number {
    return this.#options.clock.now().getTime();
  }

  #setState(state: AgentProcessState, detail?: Record<string, unknown>): void {
    this.#state = state;
    this.#options.onEvent?.({ alias: this.alias, state, ...(detail ? { detail } : {}) });
  }

  /** Marks the agent used now (idle stop counts from the last use). */
  touch(): void {
    this.#lastUsedAt = this.#now();
  }

  /** Counts an open stream; the agent is not idle while one is open. Returns the release function. */
  holdStream(): () => void {
    this.#activeStreams += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#activeStreams -= 1;
      this.touch();
    };
  }

  /**
   * The running agent's URL, starting it first if needed. Concurrent callers share one start. While
   * a failed agent's back-off lasts, -32011 at once with `retry_after_ms`.
   */
  ensureRunning(): Promise<string> {
    this.touch();
    const url = this.url;
    if (url) return Promise.resolve(url);
    if (this.#ready) return this.#ready;
    const wait = this.#nextAttemptAt - this.#now();
    if (this.#state === 'failed' && wait > 0) {
      return Promise.reject(
        new MeshRpcError('AGENT_UNAVAILABLE', `Agent ${this.alias} failed to start; retry later.`, {
          alias: this.alias,
          retry_after_ms: wait,
          reason: this.#lastError,
        }),
      );
    }
    return this.#begin(0);
  }

  #begin(delayMs: number): Promise<string> {
    const ready = (async () => {
      if (delayMs > 0) {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(resolve, delayMs);
          this.#cancelBackoff = () => {
            clearTimeout(timer);
            reject(new MeshRpcError('AGENT_UNAVAILABLE', `Agent ${this.alias} was stopped.`, { alias: this.alias }));
          };
        });
        this.#cancelBackoff = undefined;
      }
      await this.#exited;
      return this.#start();
    })();
    this.#ready = ready;
    const clear = () => {
      if (this.#ready === ready) this.#ready = undefined;
    };
    ready.then(clear, clear);
    return ready;
  }

  async #start(): Promise<string> {
    this.#starts += 1;
    this.#lastStartAt = this.#now();
    this.#port = undefined;
    this.#setState('starting');
    mkdirSync(dirname(this.#options.logFile), { recursive: true });
    const log = openSync(this.#options.logFile, 'a');
    writeSync(log, `--- ward gateway: starting ${this.alias} at ${new Date(this.#now()).toISOString()} ---\n`);
    const [execPath, ...args] = this.#options.command;
    const child = spawn(execPath, args, { env: { ...this.#options.env() }, stdio: ['ignore', log, log, 'ipc'] });
    closeSync(log);
    this.#child = child;
    this.#lastPid = child.pid ?? null;
    this.#exited = new Promise((resolve) => child.once('exit', () => resolve()));
    child.once('exit', (code, signal) => this.#onExit(child, code, signal));
    child.once('error', (error) => (this.#lastError = error.message));
    const timeoutMs = this.#options.agent.startTimeoutMs ?? this.#options.startTimeoutMs;
    const giveUp = new AbortController();
    try {
      const healthy = this.#untilHealthy(child, giveUp.signal);
      healthy.catch(() => undefined); // the race below reports the first failure; later ones are moot
      const port = await withTimeout(healthy, timeoutMs, `did not become healthy within ${timeoutMs} ms`);
      this.#port = port;
      this.#runningSince = this.#now();
      // Recovered: /health no longer reports the old failure (last_exit still says how it ended).
      this.#consecutiveFailures = 0;
      this.#lastError = null;
      this.#setState('running', { pid: child.pid, port });
      return this.url as string;
    } catch (error) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await this.#exited;
      // The cause usually sits in the agent's own log (a port in use, a bad configuration): say it.
      const cause = startFailureCause(this.#options.logFile);
      this.#lastError = cause ? `${(error as Error).message}: ${cause}` : (error as Error).message;
      this.#failures += 1;
      this.#consecutiveFailures += 1;
      this.#nextAttemptAt = this.#now() + this.#backoffDelay();
      this.#setState('failed', { reason: this.#lastError });
      throw new MeshRpcError('AGENT_UNAVAILABLE', `Agent ${this.alias} could not be started.`, { alias: this.alias, reason: this.#lastError });
    } finally {
      giveUp.abort();
    }
  }

  async #untilHealthy(child: ChildProcess, signal: AbortSignal): Promise<number> {
    const port = await new Promise<number>((resolve, reject) => {
      child.on('message', (message: { type?: string; port?: number }) => {
        if (message?.type === 'ward-agent-listening' && typeof message.port === 'number') resolve(message.port);
      });
      child.once('exit', (code, signal) => reject(new Error(`exited during start (code ${code}, signal ${signal})`)));
    });
    while (!signal.aborted) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error('exited during start');
      try {
        const response = await fetch(`http://${this.#options.host}:${port}/health`, { signal: AbortSignal.timeout(1000) });
        if (response.ok) return port;
      } catch {
        // Not answering yet.
      }
      await new Promise((resolve) => setTimeout(resolve, HEALTH_POLL_MS));
    }
    throw new Error('start abandoned');
  }

  #backoffDelay(): number {
    const { backoffMs, backoffMaxMs } = this.#options;
    return Math.min(backoffMaxMs, backoffMs * 2 ** Math.max(0, this.#failures - 1));
  }

  #onExit(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.#child !== child) return;
    this.#lastExit = { code, signal, at: new Date(this.#now()).toISOString() };
    this.#child = undefined;
    if (this.#state !== 'running') return; // a start that failed, or a stop: their own code decides the state
    // A crash. One that comes after a long healthy run starts the back-off over.
    if (this.#now() - this.#runningSince > this.#options.backoffMaxMs) this.#failures = 0;
    this.#failures += 1;
    this.#consecutiveFailures += 1;
    this.#lastError = `exited while running (code ${code}, signal ${signal})`;
    this.#restarts += 1;
    const delay = this.#backoffDelay();
    this.#setState('backoff', { code, signal, restart_in_ms: delay });
    this.#begin(delay).catch(() => undefined);
  }

  /** Stops the agent (SIGTERM, then SIGKILL after a grace period); a pending restart is cancelled. */
  async stop(): Promise<void> {
    this.#cancelBackoff?.();
    this.#cancelBackoff = undefined;
    const child = this.#child;
    if (!child || child.exitCode !== null || child.signalCode !== null) {
      if (this.#state !== 'failed') this.#setState('stopped');
      return;
    }
    this.#setState('stopping');
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    await this.#exited;
    clearTimeout(killer);
    // A call may have started a new process while this one was stopping: that one is not stopped.
    if (this.#child === undefined && this.#state === 'stopping') this.#setState('stopped');
  }

  snapshot(tailLines: number): AgentProcessSnapshot {
    return {
      alias: this.alias,
      state: this.#state,
      pid: this.#child?.pid ?? null,
      last_pid: this.#lastPid,
      port: this.#state === 'running' ? (this.#port ?? null) : null,
      starts: this.#starts,
      restarts: this.#restarts,
      consecutive_failures: this.#consecutiveFailures,
      last_start_at: this.#lastStartAt ? new Date(this.#lastStartAt).toISOString() : null,
      running_since: this.#state === 'running' ? new Date(this.#runningSince).toISOString() : null,
      last_exit: this.#lastExit,
      last_error: this.#lastError,
      last_used_at: this.#lastUsedAt ? new Date(this.#lastUsedAt).toISOString() : null,
      active_streams: this.#activeStreams,
      log_file: this.#options.logFile,
      log_tail: readLogTail(this.#options.logFile, tailLines),
    };
  }
}

async function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
