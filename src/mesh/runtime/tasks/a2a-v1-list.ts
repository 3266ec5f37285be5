/**
 * A2A 1.0 `ListTasks` (specification §3.1.4, JSON-RPC §9.4.4): the caller's own tasks, filtered by
 * `contextId`, `status` and `statusTimestampAfter`, sorted by status timestamp (most recent first),
 * paged with an opaque cursor; `historyLength` trims each task's history and artifacts are omitted
 * unless `includeArtifacts` is true. Every refused value is -32602 naming the field.
 */
import { Type, type Static } from 'typebox';
import { MeshRpcError } from '../mesh-errors.ts';
import { STATE_FROM_V1, taskToV1 } from './a2a-v1-wire.ts';
import type { TaskRecord } from './task-types.ts';
import { Id } from './task-wire.ts';

/** 1.0's default and largest page (ListTasksRequest.page_size). */
const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 100;

export const ListTasksRequestV1 = Type.Object({
  tenant: Type.Optional(Type.String({ maxLength: 0 })),
  contextId: Type.Optional(Type.Union([Id, Type.Literal('')])),
  status: Type.Optional(Type.String()),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE })),
  pageToken: Type.Optional(Type.String({ maxLength: 512 })),
  historyLength: Type.Optional(Type.Integer({ minimum: 0 })),
  statusTimestampAfter: Type.Optional(Type.String({ maxLength: 64 })),
  includeArtifacts: Type.Optional(Type.Boolean()),
});
export type ListTasksRequestV1 = Static<typeof ListTasksRequestV1>;

const invalid = (pointer: string, reason: string) => new MeshRpcError('VALIDATION_ERROR', undefined, { errors: [{ pointer, reason }] });

/** Where a page starts: after the task with these keys, in the list's order. */
type Cursor = { readonly t: string; readonly c: string; readonly id: string };

/** The sort keys of a task: status time, then creation time, then id (a total order, so a cursor is exact). */
const keysOf = (task: TaskRecord): Cursor => ({ t: task.status.timestamp, c: task.created_at, id: task.task_id });

function encodeCursor(task: TaskRecord): string {
  return Buffer.from(JSON.stringify(keysOf(task))).toString('base64url');
}

function decodeCursor(token: string): Cursor {
  try {
    const value = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as Partial<Cursor>;
    if (typeof value.t === 'string' && typeof value.c === 'string' && typeof value.id === 'string') return { t: value.t, c: value.c, id: value.id };
  } catch {
    // Answered below.
  }
  throw invalid('/pageToken', 'not a page token this agent gave out');
}

/** Negative when `a` comes first: the most recent status first (§3.1.4), then the most recently created. */
function compareKeys(a: Cursor, b: Cursor): number {
  for (const key of ['t', 'c', 'id'] as const) if (a[key] !== b[key]) return a[key] < b[key] ? 1 : -1;
  return 0;
}

const byRecency = (a: TaskRecord, b: TaskRecord): number => compareKeys(keysOf(a), keysOf(b));
const after = (task: TaskRecord, cursor: Cursor): boolean => compareKeys(keysOf(task), cursor) > 0;

function filterOf(request: ListTasksRequestV1): (task: TaskRecord) => boolean {
  const state = request.status === undefined || request.status === '' || request.status === 'TASK_STATE_UNSPECIFIED' ? undefined : STATE_FROM_V1[request.status];
  if (request.status !== undefined && request.status !== '' && request.status !== 'TASK_STATE_UNSPECIFIED' && state === undefined) {
    throw invalid('/status', `not a task state: ${Object.keys(STATE_FROM_V1).join(', ')}`);
  }
  let since: number | undefined;
  if (request.statusTimestampAfter !== undefined) {
    since = /^\d{4}-\d{2}-\d{2}T/.test(request.statusTimestampAfter) ? Date.parse(request.statusTimestampAfter) : Number.NaN;
    if (Number.isNaN(since)) throw invalid('/statusTimestampAfter', 'an RFC 3339 timestamp, e.g. 2026-01-01T00:00:00Z');
  }
  return (task) =>
    (!request.contextId || task.context_id === request.contextId) &&
    (state === undefined || task.status.state === state) &&
    (since === undefined || Date.parse(task.status.timestamp) >= since);
}

/** The `ListTasksResponse` for `tasks` (all of the caller's). */
export function listTasksV1(tasks: readonly TaskRecord[], request: ListTasksRequestV1) {
  const matching = tasks.filter(filterOf(request)).sort(byRecency);
  const cursor = request.pageToken ? decodeCursor(request.pageToken) : undefined;
  const remaining = cursor ? matching.filter((task) => after(task, cursor)) : matching;
  const page = remaining.slice(0, request.pageSize ?? DEFAULT_PAGE_SIZE);
  const last = page.at(-1);
  return {
    tasks: page.map((task) => {
      const view = taskToV1(task, request.historyLength);
      if (request.includeArtifacts === true) return view;
      const { artifacts: _omitted, ...withoutArtifacts } = view;
      return withoutArtifacts;
    }),
    nextPageToken: last && remaining.length > page.length ? encodeCursor(last) : '',
    pageSize: page.length,
    totalSize: matching.length,
  };
}
