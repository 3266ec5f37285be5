/**
 * The one interface a mesh agent implements (house style, like a2a-js's AgentExecutor): its card
 * information, its own JSON-RPC methods, and a task executor. The runtime (agent-runtime.ts) owns
 * transport, authentication, tasks, streaming and lifecycle.
 */
import type { FastifyInstance } from 'fastify';
import type { TSchema } from 'typebox';
import type { Clock } from '../../core/clock.ts';
import type { MeshConfig } from '../mesh-config.ts';
import type { MeshCallContext } from './call-context.ts';
import type { ConsentChecker, ConsentRequirement } from './consent-requirement.ts';
import type { TaskExecutor } from './tasks/task-executor.ts';

/** A skill as discovery matches it (`consent.verify`, `triage.assess`) and as A2A cards list it. */
export type AgentSkill = {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly tags: readonly string[];
  readonly examples?: readonly string[];
};

/** What the capability card, `/health` and the registry record say about an agent. */
export type AgentInfo = {
  readonly alias: string;
  /** The persona display name (`/health` `name`, the record's `display_name`). */
  readonly name: string;
  readonly description: string;
  readonly version: string;
  readonly skills: readonly AgentSkill[];
  /** Whether the agent enforces consent (the registry's `capabilities.consent_support`). */
  readonly consentSupport?: boolean;
  /**
   * The media types its tasks take (the card's `defaultInputModes`; `type/*` allowed). Default
   * `text/plain` and `application/json`: file parts of any other type are refused (tasks/file-parts.ts).
   */
  readonly inputModes?: readonly string[];
};

/** One of the agent's own methods. `params` is checked first (-32602); `consent` before `handle` (-32003). */
export type AgentMethod = {
  readonly description: string;
  readonly params?: TSchema;
  readonly consent?: ConsentRequirement;
  handle(params: never, call: MeshCallContext): unknown;
};

export interface MeshAgent {
  readonly info: AgentInfo;
  readonly methods?: Readonly<Record<string, AgentMethod>>;
  /** Without one, the agent answers no task methods. */
  readonly executeTask?: TaskExecutor;
  /**
   * Extra HTTP routes beside JSON-RPC (e.g. the avatar's `GET /dev/token`). The runtime calls it once,
   * after its own routes; the agent owns authentication of what it adds.
   */
  routes?(app: FastifyInstance): void | Promise<void>;
  close?(): void | Promise<void>;
}

/** What the runtime hands an agent factory. */
export type AgentContext = {
  /** The manifest alias the agent runs as. */
  readonly alias: string;
  readonly config: MeshConfig;
  /** This agent's own directory under MESH_DATA_DIR (created). */
  readonly dataDir: string;
  /** This agent's DID. */
  readonly did: string;
  readonly clock: Clock;
  /** Checks consent for methods and executors that touch patient data. */
  readonly consent: ConsentChecker;
};

/** An agent module's `createAgent` export (the manifest's entry point). */
export type AgentFactory = (context: AgentContext) => MeshAgent | Promise<MeshAgent>;
