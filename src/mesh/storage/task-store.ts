import type { TaskEvent, TaskEventBody, TaskRecord } from '../runtime/tasks/task-types.ts';

/**
 * Where an agent keeps its tasks and their event logs. Writes are synchronous and atomic: a task and
 * the events that describe its change are stored together or not at all, so a resumed stream never
 * sees a state the task record does not have. The default implementation is SQLite, one file per
 * agent (sqlite-task-store.ts).
 */
export interface TaskStore {
  /** Stores a new task with its first event (seq 1). Throws if the id exists. */
  insert(task: TaskRecord, event: TaskEventBody): TaskEvent;
  /** Replaces a task and appends its events, numbered after the last one. */
  update(task: TaskRecord, events: readonly TaskEventBody[]): TaskEvent[];
  get(taskId: string): TaskRecord | undefined;
  /** Events with `seq > afterSeq`, in order. */
  eventsAfter(taskId: string, afterSeq: number): TaskEvent[];
  /** Every task `sender` created, most recently changed first (A2A 1.0 `ListTasks` filters and pages them). */
  listBySender(sender: string): TaskRecord[];
  /** Tasks in `submitted` or `working`: their executor died with the previous process. */
  interrupted(): TaskRecord[];
  close(): void;
}
