import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InvalidTaskMoveError, TASK_MOVES, TASK_STATES, canMove, isTerminal, moveTask, stayWorking } from '../../../../src/mesh/runtime/tasks/task-state.ts';
import type { TaskRecord, TaskState } from '../../../../src/mesh/runtime/tasks/task-types.ts';

const ALLOWED: readonly [TaskState, TaskState][] = [
  ['submitted', 'working'],
  ['submitted', 'failed'],
  ['submitted', 'canceled'],
  ['working', 'input-required'],
  ['working', 'completed'],
  ['working', 'failed'],
  ['working', 'canceled'],
  ['input-required', 'working'],
  ['input-required', 'canceled'],
];

function task(state: TaskState): TaskRecord {
  return {
    task_id: 't1',
    context_id: 'c1',
    sender: 'did:web:a',
    recipient: 'did:web:b',
    status: { state, timestamp: '2026-01-01T00:00:00.000Z' },
    history: [],
    artifacts: [],
    metadata: {},
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
  };
}

describe('task state machine', () => {
  test('the states are the contract\'s six', () => {
    assert.deepEqual([...TASK_STATES].sort(), ['canceled', 'completed', 'failed', 'input-required', 'submitted', 'working']);
  });

  test('the table allows exactly the documented moves', () => {
    const table = Object.entries(TASK_MOVES).flatMap(([from, tos]) => tos.map((to) => `${from}→${to}`));
    assert.deepEqual(table.sort(), ALLOWED.map(([from, to]) => `${from}→${to}`).sort());
  });

  for (const [from, to] of ALLOWED) {
    test(`${from} → ${to} is allowed and recorded`, () => {
      const message = { kind: 'message' as const, messageId: 'm', role: 'agent' as const, parts: [{ kind: 'text' as const, text: 'x' }] };
      const moved = moveTask(task(from), to, '2026-01-02T00:00:00.000Z', message);
      assert.equal(moved.status.state, to);
      assert.equal(moved.status.timestamp, '2026-01-02T00:00:00.000Z');
      assert.deepEqual(moved.status.message, message);
      assert.equal(moved.history.at(-1), message);
      assert.equal(moved.updated_at, '2026-01-02T00:00:00.000Z');
    });
  }

  for (const from of TASK_STATES) {
    for (const to of TASK_STATES) {
      if (ALLOWED.some(([a, b]) => a === from && b === to)) continue;
      test(`${from} → ${to} is refused`, () => {
        assert.equal(canMove(from, to), false);
        assert.throws(() => moveTask(task(from), to, '2026-01-02T00:00:00.000Z'), InvalidTaskMoveError);
      });
    }
  }

  test('a working task can stay working with a new status (a turn left open, or the next message to it); no other state can', () => {
    const message = { kind: 'message' as const, messageId: 'm', role: 'agent' as const, parts: [{ kind: 'text' as const, text: 'open' }] };
    const open = stayWorking(task('working'), '2026-01-03T00:00:00.000Z', message);
    assert.deepEqual(open.status, { state: 'working', timestamp: '2026-01-03T00:00:00.000Z', message });
    assert.equal(open.history.at(-1), message);
    assert.deepEqual(stayWorking(task('working'), '2026-01-03T00:00:00.000Z').status, { state: 'working', timestamp: '2026-01-03T00:00:00.000Z' });
    for (const from of TASK_STATES.filter((state) => state !== 'working')) {
      assert.throws(() => stayWorking(task(from), '2026-01-03T00:00:00.000Z'), InvalidTaskMoveError, from);
    }
  });

  test('completed, failed and canceled are terminal; the others are not', () => {
    assert.deepEqual(TASK_STATES.filter(isTerminal), ['completed', 'failed', 'canceled']);
  });
});
