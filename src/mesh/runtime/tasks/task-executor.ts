import type { MeshCallContext } from '../call-context.ts';
import type { MeshMessage, Part, TaskRecord } from './task-types.ts';

/** An artifact as an executor produces it; the runtime gives it an id. */
export type ArtifactInput = { readonly name?: string; readonly description?: string; readonly parts: readonly Part[] };

/** What a turn of work ends with. A string message becomes one text part from the agent. */
export type TaskOutcome =
  | { readonly state: 'completed'; readonly message?: string | readonly Part[]; readonly artifacts?: readonly ArtifactInput[] }
  | { readonly state: 'input-required'; readonly message: string | readonly Part[] }
  /**
   * The turn is over but the task is not: it stays `working`, open to the caller's next message
   * (a new turn) or a cancel, as A2A lets an agent keep a task open (1.0 §3.3.3). Streams of the turn end.
   */
  | { readonly state: 'working'; readonly message?: string | readonly Part[] }
  | { readonly state: 'failed'; readonly message: string | readonly Part[] };

/** One turn: the first message of a task, or the caller's answer to input-required. */
export type TaskTurn = {
  /** The task as the turn starts (state `working`; `history` ends with `message`). */
  readonly task: TaskRecord;
  readonly message: MeshMessage;
  readonly call: MeshCallContext;
  /** Aborted when the task is canceled or the agent stops; the outcome is then ignored. */
  readonly signal: AbortSignal;
  /** Publishes a progress note as a `working` status event. */
  progress(text: string): void;
  /** Publishes an artifact now (rather than with the outcome). */
  addArtifact(artifact: ArtifactInput): void;
};

/**
 * An agent's task logic (like a2a-js's AgentExecutor): the runtime owns the task record, the state
 * machine, storage, streaming and cancellation; the executor only decides each turn's outcome.
 */
export type TaskExecutor = (turn: TaskTurn) => Promise<TaskOutcome>;
