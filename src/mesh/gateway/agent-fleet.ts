import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Clock } from '../../core/clock.ts';
import type { MeshConfig } from '../mesh-config.ts';
import { MeshRpcError } from '../runtime/mesh-errors.ts';
import { AgentProcess, type AgentProcessSnapshot, type AgentProcessState } from './agent-process.ts';
import { dependentsOf, startOrder, type AgentManifest } from './manifest.ts';

/** `src/cli/ward.ts`, the command every child runs (`ward agent <alias>`). */
export const WARD_CLI = fileURLToPath(new URL('../../cli/ward.ts', import.meta.url));

export type AgentFleetOptions = {
  readonly manifest: AgentManifest;
  readonly config: MeshConfig;
  readonly clock: Clock;
  /** The gateway's own URL, handed to children so they reach their dependencies through it. */
  readonly gatewayUrl: () => string;
  /** An agent's public URL when it is not `<gateway>/rpc/<alias>/` (a root listener's), per start. */
  readonly publicUrl?: (alias: string) => string | undefined;
  /** The environment children inherit (default `process.env`). */
  readonly baseEnv?: Readonly<Record<string, string | undefined>>;
  readonly onEvent?: (event: { alias: string; state: AgentProcessState; detail?: Record<string, unknown> }) => void;
};

/**
 * The gateway's agents: starts an alias with its dependencies in dependency order, stops idle ones
 * (never one that a running agent depends on, never one with an open stream or a running task), and
 * stops them all, dependents first, when the gateway closes.
 */
export class AgentFleet {
  readonly #options: AgentFleetOptions;
  readonly #processes = new Map<string, AgentProcess>();

  constructor(options: AgentFleetOptions) {
    this.#options = options;
    const { config } = options;
    const host = config.MESH_HOST === '0.0.0.0' ? '127.0.0.1' : config.MESH_HOST;
    for (const agent of options.manifest.agents.values()) {
      this.#processes.set(
        agent.alias,
        new AgentProcess({
          agent,
          command: [process.execPath, WARD_CLI, 'agent', agent.alias],
          env: () => this.#childEnv(agent.alias),
          host,
          logFile: join(config.MESH_DATA_DIR, 'logs', `${agent.alias}.log`),
          startTimeoutMs: config.GATEWAY_START_TIMEOUT_MS,
          backoffMs: config.GATEWAY_RESTART_BACKOFF_MS,
          backoffMaxMs: config.GATEWAY_RESTART_BACKOFF_MAX_MS,
          clock: options.clock,
          ...(options.onEvent ? { onEvent: options.onEvent } : {}),
        }),
      );
    }
  }

  has(alias: string): boolean {
    return this.#processes.has(alias);
  }

  get(alias: string): AgentProcess {
    const agent = this.#processes.get(alias);
    if (!agent) throw new MeshRpcError('AGENT_UNKNOWN', undefined, { alias });
    return agent;
  }

  /** The child's environment: inherited, plus where it is. Computed per start: the gateway's port is known only once it listens. */
  #childEnv(alias: string): Record<string, string> {
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(this.#options.baseEnv ?? process.env)) if (value !== undefined) env[key] = value;
    const agent = this.#options.manifest.agents.get(alias);
    const gateway = this.#options.gatewayUrl();
    const { config } = this.#options;
    // The settings agents must share with the gateway, whichever way the gateway got its own.
    const shared: Record<string, string> = {
      REGISTRY_ENV: config.REGISTRY_ENV,
      MESH_HOST: config.MESH_HOST,
      MESH_JWT_SECRET: config.MESH_JWT_SECRET,
      MESH_JWT_MAX_TTL: String(config.MESH_JWT_MAX_TTL),
      MESH_DID_DOMAIN: config.MESH_DID_DOMAIN,
      MESH_LOG_LEVEL: config.MESH_LOG_LEVEL,
      DID_VERIFY: String(config.DID_VERIFY),
      ...(config.DID_WEB_DIR === undefined ? {} : { DID_WEB_DIR: config.DID_WEB_DIR }),
    };
    return {
      ...env,
      ...shared,
      ...agent?.env,
      // The child reports the port it got over IPC, so a free port needs no guessing.
      AGENT_PORT: String(config.GATEWAY_AGENT_PORTS === 'manifest' ? (agent?.port ?? 0) : 0),
      AGENT_PUBLIC_URL: this.#options.publicUrl?.(alias) ?? `${gateway}/rpc/${alias}/`,
      MESH_GATEWAY_URL: gateway,
      MESH_MANIFEST: this.#options.manifest.source,
      MESH_DATA_DIR: this.#options.config.MESH_DATA_DIR,
    };
  }

  /** The agents a call to `alias` must wait for (it or its dependencies not running), in start order. */
  notRunningFor(alias: string): string[] {
    return startOrder(this.#options.manifest, alias).filter((name) => this.get(name).state !== 'running');
  }

  /** Starts `alias` and its dependencies (dependencies first); resolves with the agent's URL. */
  async ensure(alias: string): Promise<string> {
    let url = '';
    for (const name of startOrder(this.#options.manifest, alias)) {
      url = await this.get(name).ensureRunning();
    }
    return url;
  }

  #idleTimeout(alias: string): number {
    return this.#options.manifest.agents.get(alias)?.idleTimeoutMs ?? this.#options.config.GATEWAY_IDLE_TIMEOUT_MS;
  }

  /** Running agents with a running dependent (directly or not). */
  #heldByDependents(alias: string): boolean {
    for (const dependent of dependentsOf(this.#options.manifest, alias)) {
      const state = this.#processes.get(dependent)?.state;
      if (state === 'running' || state === 'starting' || state === 'backoff') return true;
    }
    return false;
  }

  /**
   * One idle sweep: stops every running agent unused for its idle timeout, with no open stream, no
   * running task (asked on its `/health`) and no running dependent. Dependents are looked at first, so
   * a chain that is idle as a whole stops in one sweep. Returns the aliases stopped.
   */
  async sweepIdle(): Promise<string[]> {
    const now = this.#options.clock.now().getTime();
    const stopped: string[] = [];
    const order = [...this.#options.manifest.agents.keys()].flatMap((alias) => startOrder(this.#options.manifest, alias));
    const dependentsFirst = [...new Set(order.reverse())];
    for (const alias of dependentsFirst) {
      const agent = this.get(alias);
      const timeout = this.#idleTimeout(alias);
      if (agent.state !== 'running' || timeout === 0 || agent.activeStreams > 0) continue;
      if (now - agent.lastUsedAt < timeout || this.#heldByDependents(alias)) continue;
      if (await hasRunningTasks(agent.url)) {
        agent.touch();
        continue;
      }
      await agent.stop();
      stopped.push(alias);
    }
    return stopped;
  }

  snapshot(tailLines: number): (AgentProcessSnapshot & { dependencies: readonly string[]; idle_timeout_ms: number; page_url: string | null })[] {
    return [...this.#processes.values()].map((agent) => {
      const page = this.#options.manifest.agents.get(agent.alias)?.page;
      return {
        ...agent.snapshot(tailLines),
        dependencies: this.#options.manifest.agents.get(agent.alias)?.dependencies ?? [],
        idle_timeout_ms: this.#idleTimeout(agent.alias),
        page_url: page === undefined ? null : `${this.#options.gatewayUrl()}/rpc/${agent.alias}${page}`,
      };
    });
  }

  /** Stops every agent, dependents before their dependencies. */
  async stopAll(): Promise<void> {
    const order = [...this.#options.manifest.agents.keys()].flatMap((alias) => startOrder(this.#options.manifest, alias));
    for (const alias of [...new Set(order.reverse())]) await this.get(alias).stop();
  }
}

async function hasRunningTasks(url: string | undefined): Promise<boolean> {
  if (!url) return false;
  try {
    const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) });
    const health = (await response.json()) as { active_tasks?: unknown };
    return typeof health.active_tasks === 'number' && health.active_tasks > 0;
  } catch {
    return false;
  }
}
