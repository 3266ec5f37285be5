/**
 * The mesh task model (contract §10). Messages and parts follow the spec's Mesh Message (`kind:
 * "message"`, `role`, `parts`) and are the same shapes A2A v0.3 uses, so A2A clients read them as is.
 */

/** Every task state (contract §10); moves between them are in task-state.ts. */
export type TaskState = 'submitted' | 'working' | 'input-required' | 'completed' | 'failed' | 'canceled';

export type TextPart = { readonly kind: 'text'; readonly text: string; readonly metadata?: Record<string, unknown> };
export type DataPart = {
  readonly kind: 'data';
  readonly data: Record<string, unknown>;
  readonly metadata?: Record<string, unknown>;
};
/**
 * A file: base64 `bytes` or a `uri` (one of them), its media type and name. A2A v0.3's file part;
 * 1.0's `raw` / `url` part with `mediaType` and `filename` (a2a-v1-wire.ts). Only agents that declare
 * its media type receive one (file-parts.ts).
 */
export type FilePart = {
  readonly kind: 'file';
  readonly file: { readonly bytes?: string; readonly uri?: string; readonly mimeType?: string; readonly name?: string };
  readonly metadata?: Record<string, unknown>;
};
export type Part = TextPart | DataPart | FilePart;

export type MeshMessage = {
  readonly kind: 'message';
  readonly messageId: string;
  readonly role: 'user' | 'agent';
  readonly parts: readonly Part[];
  readonly taskId?: string;
  readonly contextId?: string;
  readonly metadata?: Record<string, unknown>;
};

export type TaskStatus = {
  readonly state: TaskState;
  /** RFC 3339 UTC with milliseconds. */
  readonly timestamp: string;
  readonly message?: MeshMessage;
};

export type Artifact = {
  readonly artifactId: string;
  readonly name?: string;
  readonly description?: string;
  readonly parts: readonly Part[];
};

/** A task as stored. `sender` is the authenticated caller's DID: only it may read or steer the task. */
export type TaskRecord = {
  readonly task_id: string;
  readonly context_id: string;
  readonly sender: string;
  readonly recipient: string;
  readonly status: TaskStatus;
  readonly history: readonly MeshMessage[];
  readonly artifacts: readonly Artifact[];
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly created_at: string;
  readonly updated_at: string;
};

/**
 * One entry of a task's event log: a status change (or progress note) or a new artifact. `seq`
 * counts from 1 per task and is the SSE `id:`, so a client resumes with `Last-Event-ID`.
 */
export type TaskEvent =
  | { readonly seq: number; readonly task_id: string; readonly type: 'status'; readonly status: TaskStatus; readonly final: boolean }
  | { readonly seq: number; readonly task_id: string; readonly type: 'artifact'; readonly artifact: Artifact };

/** An event before the store numbered it. */
export type TaskEventBody =
  | { readonly type: 'status'; readonly status: TaskStatus; readonly final: boolean }
  | { readonly type: 'artifact'; readonly artifact: Artifact };

/** A message as a caller sends it; the runtime fills in its id and the task's ids. */
export type MessageInput = Omit<MeshMessage, 'messageId'> & { readonly messageId?: string };

/** What a send asks for: a message, to a new task or to `task_id`, for `recipient` (default: this agent). */
export type SendInput = {
  readonly message: MessageInput;
  readonly task_id?: string;
  readonly recipient?: string;
  readonly metadata?: Record<string, unknown>;
};
