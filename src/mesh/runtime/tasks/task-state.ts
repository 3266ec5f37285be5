/**
 * The task state machine (contract §10; docs/mesh.md draws it). Pure: no storage, no transport.
 *
 *   submitted ──► working ──► completed
 *       │            │  ▲
 *       │            ▼  │ (the caller answers)
 *       │       input-required
 *       └──────► failed (from submitted or working) / canceled (from any non-terminal state)
 */
import type { MeshMessage, TaskRecord, TaskState } from './task-types.ts';

export const TASK_STATES = ['submitted', 'working', 'input-required', 'completed', 'failed', 'canceled'] as const satisfies readonly TaskState[];

/** The allowed moves; anything else is a programming error in the runtime. */
export const TASK_MOVES: Readonly<Record<TaskState, readonly TaskState[]>> = {
  submitted: ['working', 'failed', 'canceled'],
  working: ['input-required', 'completed', 'failed', 'canceled'],
  'input-required': ['working', 'canceled'],
  completed: [],
  failed: [],
  canceled: [],
};

export const TERMINAL_STATES: ReadonlySet<TaskState> = new Set(['completed', 'failed', 'canceled']);

export function isTerminal(state: TaskState): boolean {
  return TERMINAL_STATES.has(state);
}

export function canMove(from: TaskState, to: TaskState): boolean {
  return TASK_MOVES[from].includes(to);
}

/** Thrown when the runtime attempts a move the machine does not allow (a bug, not a caller error). */
export class InvalidTaskMoveError extends Error {
  readonly from: TaskState;
  readonly to: TaskState;
  constructor(from: TaskState, to: TaskState) {
    super(`task cannot move from ${from} to ${to}`);
    this.name = 'InvalidTaskMoveError';
    this.from = from;
    this.to = to;
  }
}

/**
 * The task after moving to `to` at `timestamp`, with `message` as the status message (and appended
 * to the history). Returns a new record; throws `InvalidTaskMoveError` for a move not in TASK_MOVES.
 */
export function moveTask(task: TaskRecord, to: TaskState, timestamp: string, message?: MeshMessage): TaskRecord {
  if (!canMove(task.status.state, to)) throw new InvalidTaskMoveError(task.status.state, to);
  return {
    ...task,
    status: message ? { state: to, timestamp, message } : { state: to, timestamp },
    history: message ? [...task.history, message] : task.history,
    updated_at: timestamp,
  };
}

/**
 * The task still `working` with a new status at `timestamp`: a turn that ends with the task left open
 * (the executor's `working` outcome; `message` its answer, appended to the history), or the caller's
 * next message to such a task starting a new turn. Not a move: the state does not change.
 */
export function stayWorking(task: TaskRecord, timestamp: string, message?: MeshMessage): TaskRecord {
  if (task.status.state !== 'working') throw new InvalidTaskMoveError(task.status.state, 'working');
  return {
    ...task,
    status: message ? { state: 'working', timestamp, message } : { state: 'working', timestamp },
    history: message ? [...task.history, message] : task.history,
    updated_at: timestamp,
  };
}
