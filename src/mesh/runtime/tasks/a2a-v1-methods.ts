/**
 * A2A 1.0's JSON-RPC methods (`SendMessage`, `SendStreamingMessage`, `GetTask`, `CancelTask`,
 * `SubscribeToTask`) over the same task manager as the contract's methods, so the official A2A
 * clients work with their defaults. Params and results are translated at this edge
 * (a2a-v1-wire.ts); the task model, its store and its events are shared.
 */
import type { RpcMethod, RpcStreamItem } from '../jsonrpc.ts';
import {
  GetTaskRequestV1,
  SendMessageRequestV1,
  TaskIdRequestV1,
  asA2aV1Error,
  sendParamsFromV1,
  streamUpdateToV1,
  taskToV1,
} from './a2a-v1-wire.ts';
import type { TaskManager } from './task-manager.ts';
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

/** A stream of 1.0 `StreamResponse`s: the task as it was when the stream opened, then its updates. */
async function* v1Stream(task: TaskRecord, updates: AsyncIterable<RpcStreamItem>): AsyncGenerator<RpcStreamItem> {
  yield { result: { task: taskToV1(task) } };
  for await (const item of updates) yield { ...item, result: streamUpdateToV1(item.result) };
}

export function a2aV1Methods(manager: TaskManager): Map<string, RpcMethod<RuntimeCallContext>> {
  return new Map<string, RpcMethod<RuntimeCallContext>>([
    [
      'SendMessage',
      {
        params: SendMessageRequestV1,
        handle: (request: SendMessageRequestV1, context) =>
          withA2aCodes(async () => {
            const params = sendParamsFromV1(request);
            const task = sendA2aMessage(manager, params, context);
            const settled = params.configuration?.blocking === false ? task : await manager.settled(task.task_id, context.principal.sub, context.signal);
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
          withA2aCodes(() => {
            const task = sendA2aMessage(manager, sendParamsFromV1(request), context);
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
          withA2aCodes(() => {
            const task = manager.get(request.id, context.principal.sub);
            return v1Stream(task, frame(manager, task, undefined, context, 'a2a'));
          }),
      },
    ],
  ]);
}
