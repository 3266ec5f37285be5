/**
 * Task shapes on the wire (contract §10): the params schemas of the task methods and the views of a
 * task and its events. Each view is the contract's shape plus the A2A v0.3 names of the same values
 * (`id`, `contextId`, `kind`, `taskId`), so one answer serves both kinds of client.
 */
import { Type, type Static } from 'typebox';
import { MeshRpcError } from '../mesh-errors.ts';
import type { Artifact, TaskEvent, TaskRecord } from './task-types.ts';

export const Metadata = Type.Record(Type.String(), Type.Unknown());
export const Id = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._:-]+$' });

export const PartSchema = Type.Union([
  Type.Object({ kind: Type.Literal('text'), text: Type.String({ maxLength: 100_000 }), metadata: Type.Optional(Metadata) }),
  Type.Object({ kind: Type.Literal('data'), data: Metadata, metadata: Type.Optional(Metadata) }),
  Type.Object({
    kind: Type.Literal('file'),
    file: Type.Object({
      bytes: Type.Optional(Type.String()),
      uri: Type.Optional(Type.String({ maxLength: 8192 })),
      mimeType: Type.Optional(Type.String({ maxLength: 255 })),
      name: Type.Optional(Type.String({ maxLength: 255 })),
    }),
    metadata: Type.Optional(Metadata),
  }),
]);

/** The spec's Mesh Message: `kind` must be `message`, `role` user or agent, text, data (or file: file-parts.ts) parts. */
export const MessageSchema = Type.Object({
  kind: Type.Literal('message'),
  messageId: Type.Optional(Id),
  role: Type.Union([Type.Literal('user'), Type.Literal('agent')]),
  parts: Type.Array(PartSchema, { minItems: 1, maxItems: 64 }),
  taskId: Type.Optional(Id),
  contextId: Type.Optional(Id),
  metadata: Type.Optional(Metadata),
});

/** `tasks/send` and `tasks/sendSubscribe`. `sender`, when given, must be the authenticated DID. */
export const TaskSendParams = Type.Object({
  sender: Type.Optional(Type.String({ minLength: 1 })),
  recipient: Type.Optional(Type.String({ minLength: 1 })),
  message: MessageSchema,
  task_id: Type.Optional(Id),
  metadata: Type.Optional(Metadata),
});
export type TaskSendParams = Static<typeof TaskSendParams>;

/** `tasks/get`, `tasks/cancel`, `tasks/resubscribe`: `task_id`, or A2A's `id`. */
export const TaskRefParams = Type.Object({
  task_id: Type.Optional(Id),
  id: Type.Optional(Id),
  /** Over WebSocket (no headers per message) the resume point of tasks/resubscribe. */
  last_event_id: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.String({ pattern: '^\\d+$' })])),
});
export type TaskRefParams = Static<typeof TaskRefParams>;

/** A2A v0.3 `message/send` and `message/stream`. A continuation names its task in `message.taskId`. */
export const MessageSendParams = Type.Object({
  message: MessageSchema,
  configuration: Type.Optional(Type.Object({ blocking: Type.Optional(Type.Boolean()) })),
  metadata: Type.Optional(Metadata),
});
export type MessageSendParams = Static<typeof MessageSendParams>;

export function taskIdOf(params: TaskRefParams): string {
  const id = params.task_id ?? params.id;
  if (id === undefined) throw new MeshRpcError('VALIDATION_ERROR', 'task_id is required', { errors: [{ pointer: '/task_id', reason: 'required' }] });
  return id;
}

/** `tasks/send` answers with the id and the state as a string (contract §10). */
export function sendResult(task: TaskRecord): { task_id: string; status: string } {
  return { task_id: task.task_id, status: task.status.state };
}

/** `tasks/get` (contract §10) and an A2A v0.3 Task at once. */
export function taskView(task: TaskRecord) {
  return {
    kind: 'task' as const,
    task_id: task.task_id,
    id: task.task_id,
    contextId: task.context_id,
    status: task.status,
    history: task.history,
    artifacts: task.artifacts,
    sender: task.sender,
    recipient: task.recipient,
    metadata: task.metadata,
    created_at: task.created_at,
    updated_at: task.updated_at,
  };
}

/**
 * One streamed update: `{task_id, status, message?, final}` (contract §10) which is also an A2A
 * `status-update`; the final one carries the artifacts so a streaming caller needs no tasks/get.
 */
export function statusUpdateView(event: Extract<TaskEvent, { type: 'status' }>, task: TaskRecord) {
  return {
    kind: 'status-update' as const,
    task_id: event.task_id,
    taskId: event.task_id,
    contextId: task.context_id,
    status: event.status,
    ...(event.status.message ? { message: event.status.message } : {}),
    final: event.final,
    ...(event.final ? { artifacts: task.artifacts } : {}),
  };
}

/** An A2A v0.3 `artifact-update` (only `message/stream` sends these). */
export function artifactUpdateView(taskId: string, contextId: string, artifact: Artifact) {
  return { kind: 'artifact-update' as const, task_id: taskId, taskId, contextId, artifact, append: false, lastChunk: true };
}
