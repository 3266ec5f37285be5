/**
 * A2A 1.0's JSON-RPC methods (`SendMessage`, `SendStreamingMessage`, `GetTask`, `ListTasks`,
 * `CancelTask`, `SubscribeToTask`) over the same task manager as the contract's methods, so the official A2A
 * clients work with their defaults. Params and results are translated at this edge
 * (a2a-v1-wire.ts); the task model, its store and its events are shared.
 */
import type { RpcMethod, RpcStreamItem } from '../jsonrpc.ts';
import {
  GetTaskRequestV1,
  SendMessageRequestV1,
  TaskIdRequestV1,
  asA2aV1Error,
  pushNotificationNotSupported,
  sendParamsFromV1,
  unsupportedOperation,
  streamUpdateToV1,
  taskToV1,
} from './a2a-v1-wire.ts';
import { ListTasksRequestV1, listTasksV1 } from './a2a-v1-list.ts';
import type { TaskManager } from './task-manager.ts';
import { isTerminal } from './task-state.ts';
import type { TaskRecord } from './task-types.ts';
import { frame, sendA2aMessage, type RuntimeCallContext } from './task-methods.ts';

/** Runs `work`, answering a mesh task error with A2A's code for it. */
async function withA2aCodes<T>(work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw asA2aV1Error(error);
  }
}

/**
 * Opens a 1.0 stream, answering a failure to open it (an unknown task, a finished one) inside the
 * event stream as its one error event: a 1.0 client reads a streaming method's answer as SSE.
 */
async function streamWithA2aCodes(open: () => AsyncIterable<RpcStreamItem>): Promise<AsyncIterable<RpcStreamItem>> {
  try {
    return open();
  } catch (error) {
    const failure = asA2aV1Error(error);
    return (async function* () {
      yield* [];
      throw failure;
    })();
  }
}

/**
 * A 1.0 message names its task in `message.taskId`; a task the caller does not have is
 * TaskNotFoundError (the contract's methods would start a new task under that id).
 */
function sendV1(manager: TaskManager, request: SendMessageRequestV1, context: RuntimeCallContext): TaskRecord {
  if (request.message.taskId) manager.get(request.message.taskId, context.principal.sub);
  return sendA2aMessage(manager, sendParamsFromV1(request), context);
}

/** A stream of 1.0 `StreamResponse`s: the task as it was when the stream opened, then its updates. */
async function* v1Stream(task: TaskRecord, updates: AsyncIterable<RpcStreamItem>): AsyncGenerator<RpcStreamItem> {
  yield { result: { task: taskToV1(task) } };
  for await (const item of updates) yield { ...item, result: streamUpdateToV1(item.result) };
}

/** 1.0's push-notification config methods (§9.4.7): the agent has none to configure (§3.1.7: PushNotificationNotSupportedError). */
const PUSH_CONFIG_METHODS = ['CreateTaskPushNotificationConfig', 'GetTaskPushNotificationConfig', 'ListTaskPushNotificationConfigs', 'DeleteTaskPushNotificationConfig'];

export function a2aV1Methods(manager: TaskManager): Map<string, RpcMethod<RuntimeCallContext>> {
  return new Map<string, RpcMethod<RuntimeCallContext>>([
    ...PUSH_CONFIG_METHODS.map((name): [string, RpcMethod<RuntimeCallContext>] => [
      name,
      {
        handle: () => {
          throw pushNotificationNotSupported();
        },
      },
    ]),
    [
      'SendMessage',
      {
        params: SendMessageRequestV1,
        handle: (request: SendMessageRequestV1, context) =>
          withA2aCodes(async () => {
            const task = sendV1(manager, request, context);
            const settled = request.configuration?.returnImmediately === true ? task : await manager.settled(task.task_id, context.principal.sub, context.signal);
            return { task: taskToV1(settled, request.configuration?.historyLength) };
          }),
      },
    ],
    [
      'SendStreamingMessage',
      {
        kind: 'stream',
        params: SendMessageRequestV1,
        open: (request: SendMessageRequestV1, context) =>
          streamWithA2aCodes(() => {
            const task = sendV1(manager, request, context);
            // A new task streams from its first event; the next turn of a task from now on.
            return v1Stream(task, frame(manager, task, task.status.state === 'submitted' ? 1 : undefined, context, 'a2a'));
          }),
      },
    ],
    [
      'GetTask',
      {
        params: GetTaskRequestV1,
        handle: (request: GetTaskRequestV1, context) =>
          withA2aCodes(() => taskToV1(manager.get(request.id, context.principal.sub), request.historyLength)),
      },
    ],
    [
      'ListTasks',
      {
        params: ListTasksRequestV1,
        handle: (request: ListTasksRequestV1, context) => listTasksV1(manager.list(context.principal.sub), request),
      },
    ],
    [
      'CancelTask',
      {
        params: TaskIdRequestV1,
        handle: (request: TaskIdRequestV1, context) => withA2aCodes(() => taskToV1(manager.cancel(request.id, context.principal.sub))),
      },
    ],
    [
      'SubscribeToTask',
      {
        kind: 'stream',
        params: TaskIdRequestV1,
        // 1.0: the current task first, then its updates from now on.
        open: (request: TaskIdRequestV1, context) =>
          streamWithA2aCodes(() => {
            const task = manager.get(request.id, context.principal.sub);
            if (isTerminal(task.status.state)) {
              throw unsupportedOperation('Unsupported operation: the task is in a terminal state.', { task_id: task.task_id, state: task.status.state });
            }
            return v1Stream(task, frame(manager, task, undefined, context, 'a2a'));
          }),
      },
    ],
  ]);
}
