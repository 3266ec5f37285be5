/**
 * The task methods every agent with a task executor answers (contract §10): `tasks/send`,
 * `tasks/get`, `tasks/cancel`, `tasks/sendSubscribe`, `tasks/resubscribe`, the A2A v0.3 aliases
 * `message/send` and `message/stream` (A2A 1.0's methods are in a2a-v1-methods.ts). Transport-free:
 * streams are async iterables of results.
 */
import type { MeshCallContext } from '../call-context.ts';
import type { RpcMethod, RpcStreamItem } from '../jsonrpc.ts';
import { MeshRpcError } from '../mesh-errors.ts';
import type { TaskManager } from './task-manager.ts';
import {
  MessageSendParams,
  TaskRefParams,
  TaskSendParams,
  artifactUpdateView,
  sendResult,
  statusUpdateView,
  taskIdOf,
  taskView,
} from './task-wire.ts';
import type { TaskEvent, TaskRecord } from './task-types.ts';

/** The call context of the runtime's own methods: the agent's, plus the stream's lifetime. */
export type RuntimeCallContext = MeshCallContext & {
  /** Aborts when the client goes away (or the agent stops). */
  readonly signal: AbortSignal;
  /** `Last-Event-ID` of an HTTP request, for tasks/resubscribe. */
  readonly lastEventId?: number;
  /** The address the request came to (`http://host/`), for a card built on request. */
  readonly baseUrl?: string;
};

function checkSender(params: TaskSendParams, context: RuntimeCallContext): void {
  if (params.sender !== undefined && params.sender !== context.principal.sub) {
    throw new MeshRpcError('VALIDATION_ERROR', 'sender must be the authenticated agent (X-Agent-ID)', {
      errors: [{ pointer: '/sender', reason: 'does not match the token subject' }],
    });
  }
}

type StreamStyle = 'mesh' | 'a2a';

/** Frames a task's events: status updates always; artifact updates for A2A callers only. */
export async function* frame(
  manager: TaskManager,
  task: TaskRecord,
  afterSeq: number | undefined,
  context: RuntimeCallContext,
  style: StreamStyle,
): AsyncGenerator<RpcStreamItem> {
  const sub = context.principal.sub;
  for await (const event of manager.events(task.task_id, sub, afterSeq, context.signal)) {
    const item = itemFor(manager, task, event, sub, style);
    if (item) yield item;
  }
}

function itemFor(manager: TaskManager, task: TaskRecord, event: TaskEvent, sub: string, style: StreamStyle): RpcStreamItem | undefined {
  if (event.type === 'artifact') {
    return style === 'a2a' ? { eventId: event.seq, result: artifactUpdateView(task.task_id, task.context_id, event.artifact) } : undefined;
  }
  const current = event.final ? manager.get(task.task_id, sub) : task;
  return { eventId: event.seq, result: statusUpdateView(event, current) };
}

function lastEventIdOf(params: TaskRefParams, context: RuntimeCallContext): number | undefined {
  if (params.last_event_id !== undefined) return Number(params.last_event_id);
  return context.lastEventId;
}

/** A task's status updates from its current status on (what a WebSocket watcher of a sent task gets). */
export function watchTask(manager: TaskManager, taskId: string, context: RuntimeCallContext): AsyncIterable<RpcStreamItem> {
  return frame(manager, manager.get(taskId, context.principal.sub), undefined, context, 'mesh');
}

/** An A2A `message/send` (v0.3) or `SendMessage` (1.0): a new task, or the next turn of `message.taskId`. */
export function sendA2aMessage(manager: TaskManager, params: MessageSendParams, context: RuntimeCallContext): TaskRecord {
  return manager.send(
    {
      message: params.message,
      ...(params.message.taskId === undefined ? {} : { task_id: params.message.taskId }),
      ...(params.metadata === undefined ? {} : { metadata: params.metadata }),
    },
    context,
  );
}

/** The task methods bound to one agent's task manager. */
export function taskMethods(manager: TaskManager): Map<string, RpcMethod<RuntimeCallContext>> {
  const send = (params: TaskSendParams, context: RuntimeCallContext): TaskRecord => {
    checkSender(params, context);
    return manager.send(params, context);
  };
  return new Map<string, RpcMethod<RuntimeCallContext>>([
    ['tasks/send', { params: TaskSendParams, handle: (params: TaskSendParams, context) => sendResult(send(params, context)) }],
    [
      'tasks/get',
      { params: TaskRefParams, handle: (params: TaskRefParams, context) => taskView(manager.get(taskIdOf(params), context.principal.sub)) },
    ],
    [
      'tasks/cancel',
      { params: TaskRefParams, handle: (params: TaskRefParams, context) => taskView(manager.cancel(taskIdOf(params), context.principal.sub)) },
    ],
    [
      'tasks/sendSubscribe',
      {
        kind: 'stream',
        params: TaskSendParams,
        open: async (params: TaskSendParams, context) => {
          const task = send(params, context);
          // A new task streams from its first event; an answer to input-required from now on.
          return frame(manager, task, task.status.state === 'submitted' ? 0 : undefined, context, 'mesh');
        },
      },
    ],
    [
      'tasks/resubscribe',
      {
        kind: 'stream',
        params: TaskRefParams,
        open: async (params: TaskRefParams, context) => {
          const task = manager.get(taskIdOf(params), context.principal.sub);
          return frame(manager, task, lastEventIdOf(params, context), context, 'mesh');
        },
      },
    ],
    [
      'message/send',
      {
        params: MessageSendParams,
        handle: async (params: MessageSendParams, context) => {
          const task = sendA2aMessage(manager, params, context);
          if (params.configuration?.blocking === false) return taskView(task);
          return taskView(await manager.settled(task.task_id, context.principal.sub, context.signal));
        },
      },
    ],
    [
      'message/stream',
      {
        kind: 'stream',
        params: MessageSendParams,
        open: async (params: MessageSendParams, context) => {
          const task = sendA2aMessage(manager, params, context);
          const isNew = task.status.state === 'submitted';
          return (async function* () {
            yield { result: taskView(task) };
            yield* frame(manager, task, isNew ? 1 : undefined, context, 'a2a');
          })();
        },
      },
    ],
  ]);
}
