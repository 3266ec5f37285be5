import { randomUUID } from 'node:crypto';
import type { Clock } from '../../../core/clock.ts';
import type { MeshCallContext } from '../call-context.ts';
import { MeshRpcError } from '../mesh-errors.ts';
import type { ArtifactInput, TaskExecutor, TaskOutcome, TaskTurn } from './task-executor.ts';
import { DEFAULT_INPUT_MODES, checkMessageParts } from './file-parts.ts';
import { isTerminal, moveTask, stayWorking } from './task-state.ts';
import type { TaskStore } from '../../storage/task-store.ts';
import type { MeshMessage, MessageInput, Part, SendInput, TaskEvent, TaskEventBody, TaskRecord, TaskState } from './task-types.ts';

export type TaskManagerOptions = {
  readonly store: TaskStore;
  readonly executor: TaskExecutor;
  readonly clock: Clock;
  /** This agent's DID: the default recipient. */
  readonly agentDid: string;
  /** The media types the agent takes (its card's `defaultInputModes`); default text and JSON. */
  readonly inputModes?: readonly string[];
  /** Told about an executor that threw (the task fails with a generic message). */
  readonly onExecutorError?: (error: unknown, taskId: string) => void;
};

type Listener = (event: TaskEvent) => void;

/** A status event ends a stream when the turn is over: a terminal state, or the agent awaits input. */
export function endsStream(state: TaskState): boolean {
  return isTerminal(state) || state === 'input-required';
}

/**
 * Runs tasks: creates them, drives the state machine around the executor's turns, keeps the event
 * log, and feeds live subscribers. Only the sender (the authenticated DID that created a task) can
 * read, steer or cancel it; to anyone else it does not exist (-32002).
 */
export class TaskManager {
  readonly #options: TaskManagerOptions;
  readonly #listeners = new Map<string, Set<Listener>>();
  readonly #running = new Map<string, { controller: AbortController; done: Promise<void> }>();
  #closed = false;

  constructor(options: TaskManagerOptions) {
    this.#options = options;
  }

  #now(): string {
    return this.#options.clock.now().toISOString();
  }

  #publish(events: readonly TaskEvent[]): void {
    for (const event of events) for (const listener of this.#listeners.get(event.task_id) ?? []) listener(event);
  }

  /** `turnOver`: a `working` task whose turn ended (an executor's `working` outcome) ends streams too. */
  #statusEvent(task: TaskRecord, turnOver = false): TaskEventBody {
    return { type: 'status', status: task.status, final: turnOver || endsStream(task.status.state) };
  }

  #save(task: TaskRecord, extra: readonly TaskEventBody[] = [], turnOver = false): TaskRecord {
    this.#publish(this.#options.store.update(task, [...extra, this.#statusEvent(task, turnOver)]));
    return task;
  }

  /** Whether the task takes the caller's message now: waiting for input, or open with no turn running. */
  #takesMessage(task: TaskRecord): boolean {
    return task.status.state === 'input-required' || (task.status.state === 'working' && !this.#running.has(task.task_id));
  }

  #agentMessage(task: TaskRecord, content: string | readonly Part[]): MeshMessage {
    const parts: readonly Part[] = typeof content === 'string' ? [{ kind: 'text', text: content }] : content;
    return { kind: 'message', messageId: randomUUID(), role: 'agent', parts, taskId: task.task_id, contextId: task.context_id };
  }

  /** The task if `caller` sent it; -32002 otherwise, so ids of others' tasks reveal nothing. */
  get(taskId: string, caller: string): TaskRecord {
    const task = this.#options.store.get(taskId);
    if (!task || task.sender !== caller) throw new MeshRpcError('TASK_NOT_FOUND', undefined, { task_id: taskId });
    return task;
  }

  /** Every task `caller` sent, most recently changed first (A2A 1.0 `ListTasks`). */
  list(caller: string): TaskRecord[] {
    return this.#options.store.listBySender(caller);
  }

  /**
   * `tasks/send`: a new task (state `submitted`, work starts right after this returns), or the
   * caller's answer to a task in `input-required`, or a message to a task left open `working` by its
   * last turn (state `working`, a new turn).
   */
  send(input: SendInput, call: MeshCallContext): TaskRecord {
    checkMessageParts(input.message.parts, this.#options.inputModes ?? DEFAULT_INPUT_MODES);
    const sender = call.principal.sub;
    // A task_id names one of the caller's tasks, or it is -32002 whether it is unknown or another
    // caller's: the answer never tells whether someone else's task has that id (issue 41, finding 6).
    const existing = input.task_id === undefined ? undefined : this.get(input.task_id, sender);
    if (existing) {
      if (!this.#takesMessage(existing)) {
        throw new MeshRpcError('VALIDATION_ERROR', 'The task is not waiting for input.', {
          reason: 'task_not_awaiting_input',
          state: existing.status.state,
        });
      }
      const message = this.#callerMessage(input.message, existing);
      const answered = { ...existing, history: [...existing.history, message] };
      const working = existing.status.state === 'working' ? stayWorking(answered, this.#now()) : moveTask(answered, 'working', this.#now());
      this.#save(working);
      this.#startTurn(working, message, call);
      return working;
    }
    const now = this.#now();
    const taskId = randomUUID();
    const contextId = input.message.contextId ?? randomUUID();
    const draft: TaskRecord = {
      task_id: taskId,
      context_id: contextId,
      sender,
      recipient: input.recipient ?? this.#options.agentDid,
      status: { state: 'submitted', timestamp: now },
      history: [],
      artifacts: [],
      metadata: input.metadata ?? {},
      created_at: now,
      updated_at: now,
    };
    const message = this.#callerMessage(input.message, draft);
    const task = { ...draft, history: [message] };
    this.#publish([this.#options.store.insert(task, this.#statusEvent(task))]);
    // The answer goes out first: tasks/send returns `submitted` and the work continues.
    setImmediate(() => {
      if (this.#closed) return;
      const current = this.#options.store.get(taskId);
      if (current?.status.state !== 'submitted') return;
      const working = this.#save(moveTask(current, 'working', this.#now()));
      this.#startTurn(working, message, call);
    });
    return task;
  }

  #callerMessage(input: MessageInput, task: TaskRecord): MeshMessage {
    return { ...input, messageId: input.messageId ?? randomUUID(), taskId: task.task_id, contextId: task.context_id };
  }

  #startTurn(task: TaskRecord, message: MeshMessage, call: MeshCallContext): void {
    const controller = new AbortController();
    const entry = { controller, done: Promise.resolve() };
    // The next turn can start before this one's promise settles: only remove our own entry.
    entry.done = this.#runTurn(task, message, call, controller)
      .catch((error: unknown) => this.#options.onExecutorError?.(error, task.task_id))
      .finally(() => {
        if (this.#running.get(task.task_id) === entry) this.#running.delete(task.task_id);
      });
    this.#running.set(task.task_id, entry);
  }

  async #runTurn(task: TaskRecord, message: MeshMessage, call: MeshCallContext, controller: AbortController): Promise<void> {
    const { signal } = controller;
    const store = this.#options.store;
    const live = (): TaskRecord | undefined => {
      if (signal.aborted || this.#closed) return undefined;
      const current = store.get(task.task_id);
      return current?.status.state === 'working' ? current : undefined;
    };
    const turn: TaskTurn = {
      task,
      message,
      call,
      signal,
      progress: (text) => {
        const current = live();
        if (!current) return;
        const note = this.#agentMessage(current, text);
        this.#save({ ...current, status: { state: 'working', timestamp: this.#now(), message: note }, updated_at: this.#now() });
      },
      addArtifact: (artifact) => {
        const current = live();
        if (current) this.#addArtifacts(current, [artifact]);
      },
    };
    let outcome: TaskOutcome;
    try {
      outcome = await this.#options.executor(turn);
    } catch (error) {
      if (signal.aborted) return;
      this.#options.onExecutorError?.(error, task.task_id);
      outcome = { state: 'failed', message: 'The agent could not complete the task.' };
    }
    const current = live();
    if (!current) return;
    const withArtifacts = outcome.state === 'completed' && outcome.artifacts ? this.#withArtifacts(current, outcome.artifacts) : undefined;
    const base = withArtifacts?.task ?? current;
    const reply = outcome.message === undefined ? undefined : this.#agentMessage(base, outcome.message);
    if (outcome.state === 'working') {
      // The turn's entry leaves #running as this returns; from then on the task takes a message.
      this.#save(stayWorking(base, this.#now(), reply), [], true);
      return;
    }
    this.#save(moveTask(base, outcome.state, this.#now(), reply), withArtifacts?.events ?? []);
  }

  #withArtifacts(task: TaskRecord, inputs: readonly ArtifactInput[]): { task: TaskRecord; events: TaskEventBody[] } {
    const artifacts = inputs.map((input) => ({ artifactId: randomUUID(), ...input }));
    return {
      task: { ...task, artifacts: [...task.artifacts, ...artifacts], updated_at: this.#now() },
      events: artifacts.map((artifact) => ({ type: 'artifact', artifact })),
    };
  }

  #addArtifacts(task: TaskRecord, inputs: readonly ArtifactInput[]): void {
    const { task: next, events } = this.#withArtifacts(task, inputs);
    this.#publish(this.#options.store.update(next, events));
  }

  /** `tasks/cancel`: any non-terminal task moves to `canceled` and its executor is aborted; else -32004. */
  cancel(taskId: string, caller: string): TaskRecord {
    const task = this.get(taskId, caller);
    if (isTerminal(task.status.state)) {
      throw new MeshRpcError('TASK_NOT_CANCELABLE', undefined, { task_id: taskId, state: task.status.state });
    }
    const canceled = this.#save(moveTask(task, 'canceled', this.#now()));
    this.#running.get(taskId)?.controller.abort();
    return canceled;
  }

  /**
   * The task's events after `afterSeq` then live ones, ending after a stream-ending status (see
   * `endsStream`) or when `signal` aborts. Without `afterSeq` the stream starts at the current status.
   */
  async *events(taskId: string, caller: string, afterSeq: number | undefined, signal: AbortSignal): AsyncGenerator<TaskEvent> {
    const task = this.get(taskId, caller);
    const queue: TaskEvent[] = [];
    let wake: (() => void) | undefined;
    const listener: Listener = (event) => {
      queue.push(event);
      wake?.();
    };
    const listeners = this.#listeners.get(taskId) ?? new Set<Listener>();
    this.#listeners.set(taskId, listeners.add(listener));
    const onAbort = () => wake?.();
    signal.addEventListener('abort', onAbort);
    try {
      const stored = this.#options.store.eventsAfter(taskId, afterSeq ?? 0);
      const start = afterSeq === undefined ? stored.findLastIndex((event) => event.type === 'status') : 0;
      let last = afterSeq ?? 0;
      for (const event of stored.slice(Math.max(start, 0))) {
        yield event;
        last = event.seq;
        if (event.type === 'status' && event.final) return;
      }
      if (stored.length === 0 && isTerminal(task.status.state)) return;
      while (!signal.aborted) {
        const event = queue.shift();
        if (!event) {
          await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
          continue;
        }
        if (event.seq <= last) continue;
        yield event;
        last = event.seq;
        if (event.type === 'status' && event.final) return;
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      listeners.delete(listener);
      if (listeners.size === 0) this.#listeners.delete(taskId);
    }
  }

  /** Resolves with the task once its current turn is over (terminal or input-required). */
  async settled(taskId: string, caller: string, signal: AbortSignal): Promise<TaskRecord> {
    for await (const event of this.events(taskId, caller, 0, signal)) {
      if (event.type === 'status' && event.final) break;
    }
    return this.get(taskId, caller);
  }

  /** Tasks whose executor died with the previous process fail (their work cannot be resumed). */
  failInterrupted(reason = 'The agent restarted before the task finished.'): number {
    const interrupted = this.#options.store.interrupted();
    for (const task of interrupted) {
      this.#save(moveTask(task, 'failed', this.#now(), this.#agentMessage(task, reason)));
    }
    return interrupted.length;
  }

  /** Tasks with an executor running now (the gateway does not stop an agent that has some). */
  get activeCount(): number {
    return this.#running.size;
  }

  /** Stops every running turn: those tasks fail, so a caller is not left waiting on `working`. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const running = [...this.#running.entries()];
    for (const [, { controller }] of running) controller.abort();
    await Promise.allSettled(running.map(([, { done }]) => done));
    this.failInterrupted('The agent stopped before the task finished.');
  }
}
