/**
 * A2A 1.0 on the wire (https://a2a-protocol.org/v1.0.0/specification/, JSON-RPC binding): the params
 * of `SendMessage`, `SendStreamingMessage`, `GetTask`, `CancelTask` and `SubscribeToTask`, and the
 * translation between its ProtoJSON shapes and Ward's task model. Ward keeps one task model (the
 * contract's, which is A2A v0.3's); 1.0 is a second spelling of the same values at the edge:
 * `{text}` parts instead of `{kind: "text", text}`, `ROLE_USER` instead of `user`,
 * `TASK_STATE_COMPLETED` instead of `completed`, `{task}` / `{statusUpdate}` wrappers.
 */
import { Type, type Static } from 'typebox';
import { MeshRpcError } from '../mesh-errors.ts';
import type { Artifact, MeshMessage, Part, TaskRecord, TaskState, TaskStatus } from './task-types.ts';
import { CONTENT_TYPE_NOT_SUPPORTED } from './file-parts.ts';
import { Id, Metadata, type MessageSendParams } from './task-wire.ts';

/**
 * A 1.0 part is one of `text`, `data`, `url`, `raw`; Ward's tasks carry text, JSON objects, and files
 * of the media types the agent declares (file-parts.ts).
 */
const PartV1 = Type.Object({
  text: Type.Optional(Type.String({ maxLength: 100_000 })),
  data: Type.Optional(Type.Unknown()),
  url: Type.Optional(Type.String({ maxLength: 8192 })),
  raw: Type.Optional(Type.String()),
  metadata: Type.Optional(Metadata),
  filename: Type.Optional(Type.String({ maxLength: 255 })),
  mediaType: Type.Optional(Type.String({ maxLength: 255 })),
});
type PartV1 = Static<typeof PartV1>;

/** Empty strings are ProtoJSON's "not set" (the official client omits them, others may not). */
const OptionalId = Type.Optional(Type.Union([Id, Type.Literal('')]));

const MessageV1 = Type.Object({
  messageId: Id,
  contextId: OptionalId,
  taskId: OptionalId,
  role: Type.Union([Type.Literal('ROLE_USER'), Type.Literal('ROLE_AGENT')]),
  parts: Type.Array(PartV1, { minItems: 1, maxItems: 64 }),
  metadata: Type.Optional(Metadata),
  extensions: Type.Optional(Type.Array(Type.String())),
  referenceTaskIds: Type.Optional(Type.Array(Type.String())),
});
type MessageV1 = Static<typeof MessageV1>;

const Tenant = Type.Optional(Type.String({ maxLength: 0, description: 'Ward serves one tenant per agent: empty or absent.' }));

export const SendMessageRequestV1 = Type.Object({
  tenant: Tenant,
  message: MessageV1,
  configuration: Type.Optional(
    Type.Object({
      acceptedOutputModes: Type.Optional(Type.Array(Type.String())),
      historyLength: Type.Optional(Type.Integer({ minimum: 0 })),
      returnImmediately: Type.Optional(Type.Boolean()),
      taskPushNotificationConfig: Type.Optional(Type.Unknown()),
    }),
  ),
  metadata: Type.Optional(Metadata),
});
export type SendMessageRequestV1 = Static<typeof SendMessageRequestV1>;

export const GetTaskRequestV1 = Type.Object({ tenant: Tenant, id: Id, historyLength: Type.Optional(Type.Integer({ minimum: 0 })) });
export type GetTaskRequestV1 = Static<typeof GetTaskRequestV1>;

export const TaskIdRequestV1 = Type.Object({ tenant: Tenant, id: Id, metadata: Type.Optional(Metadata) });
export type TaskIdRequestV1 = Static<typeof TaskIdRequestV1>;

const invalid = (pointer: string, reason: string) => new MeshRpcError('VALIDATION_ERROR', undefined, { errors: [{ pointer, reason }] });

function partFromV1(part: PartV1, pointer: string): Part {
  const meta = part.metadata === undefined ? {} : { metadata: part.metadata };
  if (part.text !== undefined) return { kind: 'text', text: part.text, ...meta };
  if (part.data !== undefined) {
    if (typeof part.data !== 'object' || part.data === null || Array.isArray(part.data)) {
      throw invalid(`${pointer}/data`, 'Ward agents take a JSON object as a data part');
    }
    return { kind: 'data', data: part.data as Record<string, unknown>, ...meta };
  }
  if (part.url !== undefined || part.raw !== undefined) {
    if (part.url !== undefined && part.raw !== undefined) throw invalid(pointer, 'a part has one of raw and url, not both');
    const file = {
      ...(part.raw === undefined ? { uri: part.url } : { bytes: part.raw }),
      ...(part.mediaType ? { mimeType: part.mediaType } : {}),
      ...(part.filename ? { name: part.filename } : {}),
    };
    return { kind: 'file', file, ...meta };
  }
  throw invalid(pointer, 'a part needs text, data, raw or url');
}

/** A 1.0 `SendMessageRequest` as the v0.3 `message/send` params the task methods take. */
export function sendParamsFromV1(params: SendMessageRequestV1): MessageSendParams {
  if (params.configuration?.taskPushNotificationConfig !== undefined) {
    throw invalid('/configuration/taskPushNotificationConfig', 'push notifications are not supported (the card says pushNotifications: false)');
  }
  const { message } = params;
  const converted: MeshMessage = {
    kind: 'message',
    messageId: message.messageId,
    role: message.role === 'ROLE_USER' ? 'user' : 'agent',
    parts: message.parts.map((part, index) => partFromV1(part, `/message/parts/${index}`)),
    ...(message.taskId ? { taskId: message.taskId } : {}),
    ...(message.contextId ? { contextId: message.contextId } : {}),
    ...(message.metadata === undefined ? {} : { metadata: message.metadata }),
  };
  return {
    message: converted as MessageSendParams['message'],
    configuration: { blocking: params.configuration?.returnImmediately !== true },
    ...(params.metadata === undefined ? {} : { metadata: params.metadata }),
  };
}

const STATE_V1: Record<TaskState, string> = {
  submitted: 'TASK_STATE_SUBMITTED',
  working: 'TASK_STATE_WORKING',
  'input-required': 'TASK_STATE_INPUT_REQUIRED',
  completed: 'TASK_STATE_COMPLETED',
  failed: 'TASK_STATE_FAILED',
  canceled: 'TASK_STATE_CANCELED',
};

/** A 1.0 state name back to Ward's (`ListTasks` filters by it). */
export const STATE_FROM_V1: Readonly<Record<string, TaskState>> = Object.fromEntries(Object.entries(STATE_V1).map(([state, name]) => [name, state as TaskState]));

function partToV1(part: Part) {
  const meta = part.metadata === undefined ? {} : { metadata: part.metadata };
  if (part.kind === 'text') return { text: part.text, ...meta };
  if (part.kind === 'data') return { data: part.data, ...meta };
  const { bytes, uri, mimeType, name } = part.file;
  return { ...(bytes === undefined ? { url: uri } : { raw: bytes }), ...(mimeType ? { mediaType: mimeType } : {}), ...(name ? { filename: name } : {}), ...meta };
}

function messageToV1(message: MeshMessage) {
  return {
    messageId: message.messageId,
    ...(message.contextId ? { contextId: message.contextId } : {}),
    ...(message.taskId ? { taskId: message.taskId } : {}),
    role: message.role === 'user' ? 'ROLE_USER' : 'ROLE_AGENT',
    parts: message.parts.map(partToV1),
    ...(message.metadata === undefined ? {} : { metadata: message.metadata }),
  };
}

function statusToV1(status: TaskStatus) {
  return { state: STATE_V1[status.state], ...(status.message ? { message: messageToV1(status.message) } : {}), timestamp: status.timestamp };
}

function artifactToV1(artifact: Artifact) {
  return {
    artifactId: artifact.artifactId,
    ...(artifact.name === undefined ? {} : { name: artifact.name }),
    ...(artifact.description === undefined ? {} : { description: artifact.description }),
    parts: artifact.parts.map(partToV1),
  };
}

/**
 * A 1.0 `Task`; `historyLength` keeps only the last messages, and 0 omits the history (§3.2.4: "the
 * `history` field SHOULD be omitted").
 */
export function taskToV1(task: TaskRecord, historyLength?: number) {
  const history = historyLength === undefined ? task.history : task.history.slice(-historyLength);
  return {
    id: task.task_id,
    contextId: task.context_id,
    status: statusToV1(task.status),
    artifacts: task.artifacts.map(artifactToV1),
    ...(historyLength === 0 ? {} : { history: history.map(messageToV1) }),
    metadata: task.metadata,
  };
}

/** A 1.0 `StreamResponse` for one of the runtime's v0.3 stream updates (status or artifact). */
export function streamUpdateToV1(result: unknown): unknown {
  const item = result as { kind?: string; taskId?: string; contextId?: string; status?: TaskStatus; artifact?: Artifact };
  if (item.kind === 'status-update' && item.status) {
    return { statusUpdate: { taskId: item.taskId, contextId: item.contextId, status: statusToV1(item.status) } };
  }
  if (item.kind === 'artifact-update' && item.artifact) {
    return { artifactUpdate: { taskId: item.taskId, contextId: item.contextId, artifact: artifactToV1(item.artifact), append: false, lastChunk: true } };
  }
  throw new Error(`no A2A 1.0 form for a stream item of kind ${String(item.kind)}`);
}

/**
 * A2A numbers its task errors differently from the mesh contract (A2A: -32001 task not found, -32002
 * not cancelable; contract §10: -32002 and -32004). A 1.0 caller's client maps codes to error types,
 * so 1.0 methods answer with A2A's codes; the mesh methods keep the contract's.
 */
const A2A_CODES: Partial<Record<MeshRpcError['errorName'], number>> = { TASK_NOT_FOUND: -32001, TASK_NOT_CANCELABLE: -32002 };

class A2aV1Error extends MeshRpcError {
  readonly #code: number;
  constructor(base: MeshRpcError, code: number) {
    super(base.errorName, base.message, base.data);
    this.#code = code;
  }
  override get code(): number {
    return this.#code;
  }
  override toErrorObject() {
    const object = super.toErrorObject();
    return { ...object, code: this.#code };
  }
}

/** A2A 1.0's own error codes that Ward answers with (§5.4). */
export const A2A_V1_CODES = { PUSH_NOTIFICATION_NOT_SUPPORTED: -32003, UNSUPPORTED_OPERATION: -32004, CONTENT_TYPE_NOT_SUPPORTED: -32005 } as const;

/** An operation 1.0 answers with `UnsupportedOperationError` (-32004), e.g. a message to a finished task. */
export function unsupportedOperation(message: string, data: unknown): MeshRpcError {
  return new A2aV1Error(new MeshRpcError('VALIDATION_ERROR', message, data), A2A_V1_CODES.UNSUPPORTED_OPERATION);
}

/** 1.0's `PushNotificationNotSupportedError` (-32003): the card says `pushNotifications: false`. */
export function pushNotificationNotSupported(): MeshRpcError {
  const message = 'Push notifications are not supported (the card says pushNotifications: false).';
  return new A2aV1Error(new MeshRpcError('VALIDATION_ERROR', message), A2A_V1_CODES.PUSH_NOTIFICATION_NOT_SUPPORTED);
}

/**
 * Rethrows a mesh task error with A2A 1.0's code; anything else as it is. A message to a task that
 * cannot take one (finished, or mid-turn) is 1.0's UnsupportedOperationError: §3.1.6 names it for a
 * task "in a terminal state", where the contract's methods answer -32602; a file part of a media type
 * the agent does not declare is 1.0's ContentTypeNotSupportedError (-32005, §3.3.2; file-parts.ts).
 */
export function asA2aV1Error(error: unknown): unknown {
  if (error instanceof A2aV1Error) return error;
  if (error instanceof MeshRpcError) {
    const code = A2A_CODES[error.errorName];
    if (code !== undefined) return new A2aV1Error(error, code);
    const reason = (error.data as { reason?: unknown } | undefined)?.reason;
    if (reason === CONTENT_TYPE_NOT_SUPPORTED) return new A2aV1Error(error, A2A_V1_CODES.CONTENT_TYPE_NOT_SUPPORTED);
    if (reason === 'task_not_awaiting_input') {
      return unsupportedOperation('Unsupported operation: the task does not take a message in its current state.', error.data);
    }
  }
  return error;
}
