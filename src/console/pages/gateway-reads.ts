/**
 * What the console reads from the mesh gateway: `GET /health` (the diagnostics and mesh pages) and
 * `GET /tasks` (the mesh page). The gateway is not the registry, so these are plain fetches (agent
 * states and task states, never log lines or messages: the console does not hold a mesh credential),
 * bounded by a timeout, and they never throw: whatever happens is an answer the page can show —
 * including a gateway that did not answer ({@link GatewayUnreachable}).
 */
import type { GatewayAgentStatus, GatewayTaskStatus } from '../../contract/gateway-status.ts';
import { html, type View } from '../views/html.ts';

/** A gateway that did not answer, said so with its address and the reason, and what to check. */
export function GatewayUnreachable({ id, url, reason }: { id: string; url: string; reason: string }): View {
  return html`<div class="problem" role="alert" id=${id}>
    <p class="problem-title"><strong>The gateway could not be reached at <code>${url}</code></strong></p>
    <p>${reason}.</p>
    <p>Mesh agents start through the gateway, so none can be called until it answers. Check that it runs (<code>ward gateway</code>, or <code>ward start</code>) and that the console's <code>GATEWAY_URL</code> names it.</p>
  </div>`;
}

/** How each gateway agent state reads as a badge (the word stays the gateway's). */
export const GATEWAY_STATE_BADGE: Readonly<Record<string, string>> = { running: 'ok', starting: 'pending', stopping: 'pending', backoff: 'warning', failed: 'failed' };

/** One agent as the gateway's `/health` lists it. */
export type GatewayAgent = GatewayAgentStatus & { dependencies: string[] };

export type GatewayHealth =
  | { ok: true; url: string; status: string; version: string | null; uptimeS: number | null; agents: GatewayAgent[] }
  | { ok: false; url: string; reason: string };

/** What a read of the gateway came to: its JSON body, or why there is none (for the page to say). */
type GatewayRead = { ok: true; body: Record<string, unknown> } | { ok: false; reason: string };

/** GETs `path` on the gateway as JSON, within `timeoutMs`; `expect` is the field a right answer has. */
async function readGatewayJson(gatewayUrl: string, path: string, timeoutMs: number, expect: string): Promise<GatewayRead> {
  const timeout = AbortSignal.timeout(timeoutMs);
  let response: Response;
  try {
    response = await fetch(`${gatewayUrl}${path}`, { headers: { accept: 'application/json', 'user-agent': 'ward-console' }, signal: timeout, redirect: 'manual' });
  } catch (error) {
    return { ok: false, reason: timeout.aborted ? `no answer within ${timeoutMs} ms` : causeOf(error) };
  }
  let body: unknown;
  try {
    body = JSON.parse(await response.text());
  } catch {
    if (timeout.aborted) return { ok: false, reason: `no whole answer within ${timeoutMs} ms` };
    body = undefined;
  }
  if (response.status !== 200 || !isRecord(body) || !Array.isArray(body[expect])) {
    return { ok: false, reason: `it answered HTTP ${response.status}${isRecord(body) ? '' : ' without JSON'}; is GATEWAY_URL the gateway's address?` };
  }
  return { ok: true, body };
}

/** The gateway's `GET /health`: its agents and their states. */
export async function readGatewayHealth(gatewayUrl: string, timeoutMs: number): Promise<GatewayHealth> {
  const read = await readGatewayJson(gatewayUrl, '/health', timeoutMs, 'agents');
  if (!read.ok) return { ok: false, url: gatewayUrl, reason: read.reason };
  const { body } = read;
  return {
    ok: true,
    url: gatewayUrl,
    status: typeof body.status === 'string' ? body.status : 'unknown',
    version: typeof body.version === 'string' ? body.version : null,
    uptimeS: typeof body.uptime_s === 'number' ? body.uptime_s : null,
    agents: (body.agents as unknown[]).filter(isRecord).map(agentOf),
  };
}

/** One exchange the gateway forwarded, as its `GET /tasks` lists it. */
export type GatewayTask = GatewayTaskStatus;

export type GatewayTasks = { ok: true; inFlight: GatewayTask[]; recent: GatewayTask[]; kept: number } | { ok: false; reason: string };

/** The gateway's `GET /tasks` (served to loopback callers: the console beside the gateway). */
export async function readGatewayTasks(gatewayUrl: string, timeoutMs: number): Promise<GatewayTasks> {
  const read = await readGatewayJson(gatewayUrl, '/tasks', timeoutMs, 'recent');
  if (!read.ok) return read;
  const { body } = read;
  const tasks = (value: unknown) => (Array.isArray(value) ? value.filter(isRecord).map(taskOf) : []);
  return { ok: true, inFlight: tasks(body.in_flight), recent: tasks(body.recent), kept: typeof body.kept === 'number' ? body.kept : 0 };
}

function taskOf(raw: Record<string, unknown>): GatewayTask {
  const text = (value: unknown) => (typeof value === 'string' ? value : null);
  return {
    alias: text(raw.alias) ?? '?',
    method: text(raw.method) ?? '?',
    state: text(raw.state) ?? 'unknown',
    streamed: raw.streamed === true,
    started_at: text(raw.started_at) ?? '',
    ended_at: text(raw.ended_at),
    duration_ms: typeof raw.duration_ms === 'number' ? raw.duration_ms : 0,
  };
}

function agentOf(raw: Record<string, unknown>): GatewayAgent {
  const text = (value: unknown) => (typeof value === 'string' ? value : null);
  const number = (value: unknown) => (typeof value === 'number' ? value : null);
  const exit = isRecord(raw.last_exit) ? raw.last_exit : null;
  return {
    alias: text(raw.alias) ?? '?',
    state: text(raw.state) ?? 'unknown',
    pid: number(raw.pid),
    last_pid: number(raw.last_pid),
    port: number(raw.port),
    starts: number(raw.starts) ?? 0,
    restarts: number(raw.restarts) ?? 0,
    consecutive_failures: number(raw.consecutive_failures) ?? 0,
    running_since: text(raw.running_since),
    last_start_at: text(raw.last_start_at),
    last_exit: exit ? { code: number(exit.code), signal: text(exit.signal), at: text(exit.at) ?? '' } : null,
    last_error: text(raw.last_error),
    last_used_at: text(raw.last_used_at),
    dependencies: Array.isArray(raw.dependencies) ? raw.dependencies.filter((item): item is string => typeof item === 'string') : [],
    page_url: webUrl(raw.page_url),
  };
}

/** An http(s) URL as it came, else null: the page links it, and no other scheme is a page. */
function webUrl(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol) ? value : null;
  } catch {
    return null;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** ECONNREFUSED, ENOTFOUND…: undici puts the useful part in `cause`. */
function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  if (cause && typeof cause.code === 'string') return cause.code;
  if (cause && typeof cause.message === 'string') return cause.message;
  return error instanceof Error ? error.message : String(error);
}
