/**
 * What the try page asks of the mesh gateway: send a test message to an agent (`tasks/send`), read the
 * task (`tasks/get`) and follow its states (`tasks/resubscribe` from its first event, an SSE stream).
 * Plain JSON-RPC over HTTP with a mesh credential, as any caller of the gateway (docs/mesh.md): the
 * console imports no mesh code. The gateway applies its PHI guard to what is sent, and its refusal
 * comes back here as it gave it, to be shown (-32012 with the findings, never the values).
 *
 * The credential is a development token in development — an HS256 token signed with the mesh's
 * published development secret, the same rule as the avatar's `GET /dev/token` — and the operator's
 * own mesh token anywhere else (decisions.md 76).
 */
import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { DEFAULT_MESH_JWT_SECRET } from '../../core/config.ts';

/** Who the console's development token speaks as: tasks it sends belong to this DID. */
export const DEV_TOKEN_SUB = 'did:web:localhost:agents:ward-console';
const DEV_TOKEN_TTL_SECONDS = 300;

/** A mesh credential: the bearer token and the DID it names (`X-Agent-ID` must equal `sub`). */
export type MeshCredential = { token: string; sub: string; kind: 'development' | 'own' };

/** Whether the console may mint development tokens: never with `REGISTRY_ENV=production`. */
export function developmentTokensAllowed(env: string): boolean {
  return env !== 'production';
}

/** A development token (5 minutes, scope `mesh:invoke`), signed with the mesh's default development secret. */
export async function developmentCredential(now = new Date()): Promise<MeshCredential> {
  const iat = Math.floor(now.getTime() / 1000);
  const token = await new SignJWT({ scope: 'mesh:invoke' })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(DEV_TOKEN_SUB)
    .setIssuedAt(iat)
    .setExpirationTime(iat + DEV_TOKEN_TTL_SECONDS)
    .sign(new TextEncoder().encode(DEFAULT_MESH_JWT_SECRET));
  return { token, sub: DEV_TOKEN_SUB, kind: 'development' };
}

/**
 * The operator's own mesh token, as pasted: its `sub` read (not verified: the gateway verifies) to
 * name the caller in `X-Agent-ID`. Undefined when it is not a JWT with a `sub`.
 */
export function ownCredential(raw: string): MeshCredential | undefined {
  const token = raw.trim().replace(/^Bearer\s+/i, '');
  const parts = token.split('.');
  if (parts.length !== 3 || token.length > 8192) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(parts[1] ?? '', 'base64url').toString('utf8')) as { sub?: unknown };
    return typeof claims.sub === 'string' && claims.sub !== '' ? { token, sub: claims.sub, kind: 'own' } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The gateway alias an endpoint URL names: `<gateway>/rpc/<alias>/`, as routing advice gives the mesh
 * agents' endpoints. Undefined for an endpoint elsewhere: the try page sends through this console's
 * gateway only, never to an address an agent's record names (the console is not a relay).
 */
export function aliasAtGateway(gatewayUrl: string, endpointUrl: string): string | undefined {
  const prefix = `${gatewayUrl}/rpc/`;
  if (!endpointUrl.startsWith(prefix)) return undefined;
  const match = /^([A-Za-z0-9_-]{1,64})\/?$/.exec(endpointUrl.slice(prefix.length));
  return match?.[1];
}

/** A JSON-RPC error as the gateway or the agent gave it. */
export type RpcError = { code: number; message: string; data?: unknown };

export type GatewayCall<T> = { ok: true; result: T } | { ok: false; error: RpcError; status: number | null };

/** The parts of a test message: its text, and a JSON object as a data part when one is given. */
export type TestMessage = { text: string; data?: Record<string, unknown> | undefined };

function headersFor(credential: MeshCredential, accept = 'application/json'): Record<string, string> {
  return { authorization: `Bearer ${credential.token}`, 'x-agent-id': credential.sub, 'content-type': 'application/json', accept, 'user-agent': 'ward-console' };
}

/** A gateway that did not answer, as an error of the same shape as the gateway's own. */
function unreachable(gatewayUrl: string, error: unknown, timedOut: boolean, timeoutMs: number): { ok: false; error: RpcError; status: null } {
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause?.code;
  const reason = timedOut ? `no answer within ${timeoutMs} ms` : typeof cause === 'string' ? cause : error instanceof Error ? error.message : String(error);
  return { ok: false, status: null, error: { code: -32011, message: `The gateway could not be reached at ${gatewayUrl} (${reason}).` } };
}

/** POSTs one JSON-RPC call to `<gateway>/rpc/<alias>` and reads its answer. */
async function callGateway<T>(gatewayUrl: string, alias: string, credential: MeshCredential, method: string, params: unknown, timeoutMs: number): Promise<GatewayCall<T>> {
  const timeout = AbortSignal.timeout(timeoutMs);
  try {
    const response = await fetch(`${gatewayUrl}/rpc/${encodeURIComponent(alias)}`, {
      method: 'POST',
      headers: headersFor(credential),
      body: JSON.stringify({ jsonrpc: '2.0', id: randomUUID(), method, params }),
      signal: timeout,
      redirect: 'manual',
    });
    const body = (await response.json().catch(() => undefined)) as { result?: T; error?: RpcError } | undefined;
    if (body?.error && typeof body.error.code === 'number') return { ok: false, status: response.status, error: body.error };
    if (body && 'result' in body) return { ok: true, result: body.result as T };
    return { ok: false, status: response.status, error: { code: -32603, message: `The gateway answered HTTP ${response.status} without a JSON-RPC answer; is GATEWAY_URL the gateway's address?` } };
  } catch (error) {
    return unreachable(gatewayUrl, error, timeout.aborted, timeoutMs);
  }
}

/**
 * `tasks/send`: the task's id, or the refusal (the PHI guard's -32012 among them). With `taskId`, the
 * message answers that task (one waiting for input) instead of starting one.
 */
export async function sendTestMessage(gatewayUrl: string, alias: string, credential: MeshCredential, message: TestMessage, timeoutMs: number, taskId?: string): Promise<GatewayCall<{ task_id: string }>> {
  const parts: unknown[] = [{ kind: 'text', text: message.text }];
  if (message.data) parts.push({ kind: 'data', data: message.data });
  return callGateway(gatewayUrl, alias, credential, 'tasks/send', { message: { kind: 'message', role: 'user', parts }, ...(taskId ? { task_id: taskId } : {}) }, timeoutMs);
}

/** A task as `tasks/get` gives it (the fields the page shows). */
export type TaskView = {
  task_id: string;
  status: { state: string; timestamp?: string; message?: { parts?: Array<{ kind?: string; text?: string; data?: unknown }> } };
  artifacts?: Array<{ name?: string; parts?: Array<{ kind?: string; text?: string; data?: unknown }> }>;
};

export async function getTask(gatewayUrl: string, alias: string, credential: MeshCredential, taskId: string, timeoutMs: number): Promise<GatewayCall<TaskView>> {
  return callGateway(gatewayUrl, alias, credential, 'tasks/get', { task_id: taskId }, timeoutMs);
}

/**
 * `tasks/resubscribe` after the event `afterSeq` (0: from the task's first event): its states so far,
 * then live ones to the end of that turn. The open response (an SSE stream), or the error the gateway
 * gave instead.
 */
export async function openTaskStream(gatewayUrl: string, alias: string, credential: MeshCredential, taskId: string, afterSeq: number, timeoutMs: number, signal: AbortSignal): Promise<{ ok: true; response: Response } | { ok: false; error: RpcError }> {
  // Only the connection is bounded by the timeout; `signal` (the browser leaving) ends the stream.
  const connect = AbortSignal.timeout(timeoutMs);
  const stop = new AbortController();
  const abortOnConnectTimeout = () => stop.abort(connect.reason);
  connect.addEventListener('abort', abortOnConnectTimeout, { once: true });
  try {
    const response = await fetch(`${gatewayUrl}/rpc/${encodeURIComponent(alias)}`, {
      method: 'POST',
      headers: headersFor(credential, 'text/event-stream'),
      body: JSON.stringify({ jsonrpc: '2.0', id: randomUUID(), method: 'tasks/resubscribe', params: { task_id: taskId, last_event_id: afterSeq } }),
      signal: AbortSignal.any([signal, stop.signal]),
      redirect: 'manual',
    });
    connect.removeEventListener('abort', abortOnConnectTimeout);
    if (response.ok && response.body && (response.headers.get('content-type') ?? '').startsWith('text/event-stream')) return { ok: true, response };
    const body = (await response.json().catch(() => undefined)) as { error?: RpcError } | undefined;
    return { ok: false, error: body?.error ?? { code: -32603, message: `The gateway answered HTTP ${response.status} without a stream.` } };
  } catch (error) {
    connect.removeEventListener('abort', abortOnConnectTimeout);
    return unreachable(gatewayUrl, error, connect.aborted, timeoutMs);
  }
}
