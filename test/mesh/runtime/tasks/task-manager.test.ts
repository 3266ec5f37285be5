import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { systemClock } from '../../../../src/core/clock.ts';
import type { MeshCallContext } from '../../../../src/mesh/runtime/call-context.ts';
import { MeshRpcError } from '../../../../src/mesh/runtime/mesh-errors.ts';
import { SqliteTaskStore } from '../../../../src/mesh/storage/sqlite-task-store.ts';
import type { TaskExecutor } from '../../../../src/mesh/runtime/tasks/task-executor.ts';
import { TaskManager } from '../../../../src/mesh/runtime/tasks/task-manager.ts';
import type { TaskEvent, TaskRecord } from '../../../../src/mesh/runtime/tasks/task-types.ts';
import { deferred, eventually, tempDir, textMessage } from '../../helpers.ts';

const ALICE = 'did:web:localhost:agents:alice';
const BOB = 'did:web:localhost:agents:bob';

function call(sub = ALICE): MeshCallContext {
  return {
    principal: { sub, scopes: ['mesh:invoke'], issuedAt: 0, expiresAt: 0 },
    requestId: 'r',
    traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    transport: 'http',
    clock: systemClock,
  };
}

function setup(t: TestContext, executor: TaskExecutor, dir = tempDir(t)) {
  const store = new SqliteTaskStore(join(dir, 'tasks.sqlite'));
  const errors: unknown[] = [];
  const manager = new TaskManager({ store, executor, clock: systemClock, agentDid: 'did:web:localhost:agents:me', onExecutorError: (error) => errors.push(error) });
  t.after(async () => {
    await manager.close();
    store.close();
  });
  return { manager, store, errors, dir };
}

const send = (manager: TaskManager, text = 'hello', sub = ALICE) => manager.send({ message: textMessage(text) as never }, call(sub));

async function settled(manager: TaskManager, taskId: string, sub = ALICE): Promise<TaskRecord> {
  return manager.settled(taskId, sub, AbortSignal.timeout(20_000));
}

const states = (events: TaskEvent[]) => events.flatMap((event) => (event.type === 'status' ? [event.status.state] : [`artifact:${event.artifact.name}`]));

function rpcCode(fn: () => unknown): number {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof MeshRpcError, String(error));
    return error.code;
  }
  return 0;
}

describe('task manager', () => {
  test('tasks/send returns submitted at once; the work then moves it to working and completed', async (t) => {
    const gate = deferred();
    const { manager, store } = setup(t, async () => {
      await gate.promise;
      return { state: 'completed', message: 'done', artifacts: [{ name: 'result', parts: [{ kind: 'data', data: { ok: true } }] }] };
    });
    const task = send(manager);
    assert.equal(task.status.state, 'submitted');
    assert.equal(task.sender, ALICE);
    assert.equal(task.recipient, 'did:web:localhost:agents:me');
    assert.equal(task.history.length, 1);
    await eventually(() => (manager.get(task.task_id, ALICE).status.state === 'working' ? true : undefined), 'working');
    gate.resolve();
    const done = await settled(manager, task.task_id);
    assert.equal(done.status.state, 'completed');
    assert.equal(done.status.message?.role, 'agent');
    assert.deepEqual(done.artifacts.map((artifact) => artifact.name), ['result']);
    const events = store.eventsAfter(task.task_id, 0);
    assert.deepEqual(states(events), ['submitted', 'working', 'artifact:result', 'completed']);
    assert.deepEqual(events.map((event) => event.seq), [1, 2, 3, 4]);
    assert.deepEqual(events.map((event) => event.type === 'status' && event.final), [false, false, false, true]);
  });

  test('input-required ends a turn; the caller\'s answer moves the task back to working, then completed', async (t) => {
    const { manager, store } = setup(t, async ({ task }) =>
      task.history.filter((message) => message.role === 'user').length < 2 ? { state: 'input-required', message: 'more please' } : { state: 'completed', message: 'thanks' },
    );
    const task = send(manager, 'first');
    const waiting = await settled(manager, task.task_id);
    assert.equal(waiting.status.state, 'input-required');
    assert.equal(waiting.status.message?.parts[0]?.kind, 'text');
    const answered = manager.send({ task_id: task.task_id, message: textMessage('second') as never }, call());
    assert.equal(answered.status.state, 'working');
    const done = await settled(manager, task.task_id);
    assert.equal(done.status.state, 'completed');
    assert.deepEqual(done.history.map((message) => message.role), ['user', 'agent', 'user', 'agent']);
    assert.deepEqual(states(store.eventsAfter(task.task_id, 0)), ['submitted', 'working', 'input-required', 'working', 'completed']);
  });

  test('a message to a task that is not waiting for input is -32602; to another caller\'s task it is -32002, as for an unknown id (issue 41, finding 6)', async (t) => {
    const { manager } = setup(t, async () => ({ state: 'input-required', message: '?' }));
    const task = send(manager);
    await eventually(() => (manager.get(task.task_id, ALICE).status.state === 'input-required' ? true : undefined), 'input-required');
    const historyBefore = manager.get(task.task_id, ALICE).history.length;
    const foreign = (() => {
      try {
        manager.send({ task_id: task.task_id, message: textMessage('x') as never }, call(BOB));
      } catch (error) {
        return error as MeshRpcError;
      }
      return undefined;
    })();
    const unknown = (() => {
      try {
        manager.send({ task_id: 'f47ac10b-58cc-4372-a567-0e02b2c3d479', message: textMessage('x') as never }, call(BOB));
      } catch (error) {
        return error as MeshRpcError;
      }
      return undefined;
    })();
    assert.equal(foreign?.code, -32002);
    assert.deepEqual({ code: foreign?.code, message: foreign?.message }, { code: unknown?.code, message: unknown?.message }, 'the same answer: nothing tells that the id is taken');
    assert.doesNotMatch(JSON.stringify(foreign), /in use/);
    assert.equal(manager.get(task.task_id, ALICE).history.length, historyBefore, "Bob's message reached nothing");
    const done = setup(t, async () => ({ state: 'completed' }));
    const finished = send(done.manager);
    await settled(done.manager, finished.task_id);
    assert.equal(rpcCode(() => done.manager.send({ task_id: finished.task_id, message: textMessage('x') as never }, call())), -32602);
  });

  test('an executor that throws fails the task with a generic message and is reported', async (t) => {
    const { manager, errors } = setup(t, async () => {
      throw new Error('database password is hunter2');
    });
    const done = await settled(manager, send(manager).task_id);
    assert.equal(done.status.state, 'failed');
    assert.doesNotMatch(JSON.stringify(done), /hunter2/);
    assert.equal(errors.length, 1);
  });

  test('an executor may fail the task itself', async (t) => {
    const { manager } = setup(t, async () => ({ state: 'failed', message: 'cannot do that' }));
    const done = await settled(manager, send(manager).task_id);
    assert.equal(done.status.state, 'failed');
    assert.deepEqual(done.status.message?.parts, [{ kind: 'text', text: 'cannot do that' }]);
  });

  test('progress notes are working status events with a message', async (t) => {
    const { manager, store } = setup(t, async ({ progress }) => {
      progress('halfway');
      return { state: 'completed' };
    });
    const task = send(manager);
    await settled(manager, task.task_id);
    const notes = store.eventsAfter(task.task_id, 0).flatMap((event) => (event.type === 'status' && event.status.message ? [event.status.message.parts[0]] : []));
    assert.deepEqual(notes, [{ kind: 'text', text: 'halfway' }]);
  });

  test('cancel moves a submitted task to canceled before any work starts', async (t) => {
    let ran = false;
    const { manager } = setup(t, async () => {
      ran = true;
      return { state: 'completed' };
    });
    const task = send(manager);
    assert.equal(manager.cancel(task.task_id, ALICE).status.state, 'canceled');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(ran, false);
    assert.equal(manager.get(task.task_id, ALICE).status.state, 'canceled');
  });

  test('cancel moves a working task to canceled and aborts its executor, whose outcome is then ignored', async (t) => {
    const started = deferred();
    const aborted = deferred();
    const { manager } = setup(t, async ({ signal }) => {
      started.resolve();
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
      aborted.resolve();
      return { state: 'completed' };
    });
    const task = send(manager);
    await started.promise;
    assert.equal(manager.cancel(task.task_id, ALICE).status.state, 'canceled');
    await aborted.promise;
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(manager.get(task.task_id, ALICE).status.state, 'canceled');
  });

  test('cancel moves an input-required task to canceled', async (t) => {
    const { manager } = setup(t, async () => ({ state: 'input-required', message: '?' }));
    const task = send(manager);
    await settled(manager, task.task_id);
    assert.equal(manager.cancel(task.task_id, ALICE).status.state, 'canceled');
  });

  test('cancel of a finished task is -32004 Task not cancelable', async (t) => {
    const { manager } = setup(t, async () => ({ state: 'completed' }));
    const task = send(manager);
    await settled(manager, task.task_id);
    assert.equal(rpcCode(() => manager.cancel(task.task_id, ALICE)), -32004);
  });

  test('another caller cannot see, cancel or follow a task: -32002, as for an unknown id', async (t) => {
    const { manager } = setup(t, async () => ({ state: 'input-required', message: '?' }));
    const task = send(manager);
    assert.equal(rpcCode(() => manager.get(task.task_id, BOB)), -32002);
    assert.equal(rpcCode(() => manager.cancel(task.task_id, BOB)), -32002);
    assert.equal(rpcCode(() => manager.get('no-such-task', ALICE)), -32002);
    await assert.rejects(manager.events(task.task_id, BOB, 0, AbortSignal.timeout(1000)).next(), (error: MeshRpcError) => error.code === -32002);
  });

  test('events replay after a sequence number, then follow live until the turn ends', async (t) => {
    const gate = deferred();
    const { manager } = setup(t, async () => {
      await gate.promise;
      return { state: 'completed' };
    });
    const task = send(manager);
    await eventually(() => (manager.get(task.task_id, ALICE).status.state === 'working' ? true : undefined), 'working');
    const seen: number[] = [];
    const following = (async () => {
      for await (const event of manager.events(task.task_id, ALICE, 1, AbortSignal.timeout(20_000))) seen.push(event.seq);
    })();
    gate.resolve();
    await following;
    assert.deepEqual(seen, [2, 3]);
    const fromNow: string[] = [];
    for await (const event of manager.events(task.task_id, ALICE, undefined, AbortSignal.timeout(20_000))) fromNow.push(states([event])[0] as string);
    assert.deepEqual(fromNow, ['completed'], 'without a sequence number the stream starts at the current status');
  });

  test('stopping the agent fails a task whose work has not started (submitted → failed)', async (t) => {
    const { manager } = setup(t, async () => ({ state: 'completed' }));
    const task = send(manager);
    await manager.close();
    const stopped = manager.get(task.task_id, ALICE);
    assert.equal(stopped.status.state, 'failed');
    assert.match(JSON.stringify(stopped.status.message), /stopped before the task finished/);
  });

  test('tasks survive a restart: an unfinished one fails, one waiting for input continues', async (t) => {
    const dir = tempDir(t);
    const hold = deferred();
    const first = setup(t, async ({ message }) => {
      if (message.parts[0]?.kind === 'text' && message.parts[0].text === 'ask') return { state: 'input-required', message: '?' };
      await hold.promise;
      return { state: 'completed' };
    }, dir);
    const waiting = send(first.manager, 'ask');
    await settled(first.manager, waiting.task_id);
    const running = send(first.manager, 'run');
    await eventually(() => (first.manager.get(running.task_id, ALICE).status.state === 'working' ? true : undefined), 'working');
    // A new process opens the same file while the old one's work is still "working" in it.
    const second = setup(t, async () => ({ state: 'completed', message: 'resumed' }), dir);
    assert.equal(second.manager.failInterrupted(), 1);
    assert.equal(second.manager.get(running.task_id, ALICE).status.state, 'failed');
    assert.equal(second.manager.get(waiting.task_id, ALICE).status.state, 'input-required');
    second.manager.send({ task_id: waiting.task_id, message: textMessage('answer') as never }, call());
    assert.equal((await settled(second.manager, waiting.task_id)).status.state, 'completed');
    hold.resolve();
  });
});
