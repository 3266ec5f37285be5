import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { openAgentDatabase } from './agent-database.ts';
import type { TaskStore } from './task-store.ts';
import type { TaskEvent, TaskEventBody, TaskRecord } from '../runtime/tasks/task-types.ts';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS tasks (
  task_id TEXT PRIMARY KEY,
  sender TEXT NOT NULL,
  state TEXT NOT NULL,
  last_seq INTEGER NOT NULL,
  document TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS tasks_by_state ON tasks (state);
-- By sender alone: ListTasks sorts one sender's tasks, and an index with updated_at would move on
-- every task write (bench:mesh row a fell from about 0.50 to 0.45 with it).
CREATE INDEX IF NOT EXISTS tasks_by_sender ON tasks (sender);
CREATE TABLE IF NOT EXISTS task_events (
  task_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  event TEXT NOT NULL,
  PRIMARY KEY (task_id, seq)
) WITHOUT ROWID;
`;

/**
 * The task store over `node:sqlite`, one database file per agent. WAL with `synchronous=NORMAL`: a
 * committed task survives the agent process crashing or being killed (what a restart needs); only an
 * operating-system crash may lose the last commits, a trade made for per-request latency
 * (docs/mesh.md, decisions).
 */
export class SqliteTaskStore implements TaskStore {
  readonly #db: DatabaseSync;
  readonly #insertTask: StatementSync;
  readonly #updateTask: StatementSync;
  readonly #selectTask: StatementSync;
  readonly #insertEvent: StatementSync;
  readonly #selectEvents: StatementSync;
  readonly #selectInterrupted: StatementSync;
  readonly #selectBySender: StatementSync;
  readonly #begin: StatementSync;
  readonly #commit: StatementSync;
  readonly #rollback: StatementSync;

  constructor(path: string) {
    this.#db = openAgentDatabase(path, 'NORMAL', SCHEMA);
    this.#insertTask = this.#db.prepare(
      'INSERT INTO tasks (task_id, sender, state, last_seq, document, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
    );
    this.#updateTask = this.#db.prepare(
      'UPDATE tasks SET state = ?, last_seq = ?, document = ?, updated_at = ? WHERE task_id = ? RETURNING last_seq',
    );
    this.#selectTask = this.#db.prepare('SELECT document, last_seq FROM tasks WHERE task_id = ?');
    this.#insertEvent = this.#db.prepare('INSERT INTO task_events (task_id, seq, event) VALUES (?, ?, ?)');
    this.#selectEvents = this.#db.prepare('SELECT event FROM task_events WHERE task_id = ? AND seq > ? ORDER BY seq');
    this.#selectInterrupted = this.#db.prepare("SELECT document FROM tasks WHERE state IN ('submitted', 'working')");
    this.#selectBySender = this.#db.prepare('SELECT document FROM tasks WHERE sender = ? ORDER BY updated_at DESC, rowid DESC');
    // Prepared once: a task turn is three short transactions, and parsing BEGIN/COMMIT each time shows.
    this.#begin = this.#db.prepare('BEGIN IMMEDIATE');
    this.#commit = this.#db.prepare('COMMIT');
    this.#rollback = this.#db.prepare('ROLLBACK');
  }

  #transaction<T>(work: () => T): T {
    this.#begin.run();
    try {
      const result = work();
      this.#commit.run();
      return result;
    } catch (error) {
      this.#rollback.run();
      throw error;
    }
  }

  #appendEvents(taskId: string, firstSeq: number, bodies: readonly TaskEventBody[]): TaskEvent[] {
    return bodies.map((body, index) => {
      const event = { seq: firstSeq + index, task_id: taskId, ...body } as TaskEvent;
      this.#insertEvent.run(taskId, event.seq, JSON.stringify(event));
      return event;
    });
  }

  insert(task: TaskRecord, event: TaskEventBody): TaskEvent {
    return this.#transaction(() => {
      this.#insertTask.run(task.task_id, task.sender, task.status.state, 1, JSON.stringify(task), task.updated_at);
      return this.#appendEvents(task.task_id, 1, [event])[0] as TaskEvent;
    });
  }

  update(task: TaskRecord, events: readonly TaskEventBody[]): TaskEvent[] {
    return this.#transaction(() => {
      const row = this.#selectTask.get(task.task_id) as { last_seq: number } | undefined;
      if (!row) throw new Error(`task ${task.task_id} does not exist`);
      const lastSeq = row.last_seq + events.length;
      this.#updateTask.run(task.status.state, lastSeq, JSON.stringify(task), task.updated_at, task.task_id);
      return this.#appendEvents(task.task_id, row.last_seq + 1, events);
    });
  }

  get(taskId: string): TaskRecord | undefined {
    const row = this.#selectTask.get(taskId) as { document: string } | undefined;
    return row ? (JSON.parse(row.document) as TaskRecord) : undefined;
  }

  eventsAfter(taskId: string, afterSeq: number): TaskEvent[] {
    return (this.#selectEvents.all(taskId, afterSeq) as { event: string }[]).map((row) => JSON.parse(row.event) as TaskEvent);
  }

  listBySender(sender: string): TaskRecord[] {
    return (this.#selectBySender.all(sender) as { document: string }[]).map((row) => JSON.parse(row.document) as TaskRecord);
  }

  interrupted(): TaskRecord[] {
    return (this.#selectInterrupted.all() as { document: string }[]).map((row) => JSON.parse(row.document) as TaskRecord);
  }

  close(): void {
    if (this.#db.isOpen) this.#db.close();
  }
}
