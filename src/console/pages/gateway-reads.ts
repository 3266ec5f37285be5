/**
 * The mesh gateway's `GET /health`, read by the diagnostics page. The gateway is not the registry, so
 * this is a plain fetch of its public health answer (agent states, never log lines: the console does
 * not hold a mesh credential), bounded by a timeout, and it never throws: whatever happens is a
 * {@link GatewayHealth} the page can show.
 */

/** One agent as the gateway's `/health` lists it (src/mesh/gateway/agent-process.ts, the fields shown). */
export type GatewayAgent = {
  alias: string;
  state: string;
  pid: number | null;
  last_pid: number | null;
  starts: number;
  restarts: number;
  consecutive_failures: number;
  running_since: string | null;
  last_start_at: string | null;
  last_exit: { code: number | null; signal: string | null; at: string } | null;
  last_error: string | null;
  last_used_at: string | null;
  dependencies: string[];
};

export type GatewayHealth =
  | { ok: true; url: string; status: string; version: string | null; uptimeS: number | null; agents: GatewayAgent[] }
  | { ok: false; url: string; reason: string };

export async function readGatewayHealth(gatewayUrl: string, timeoutMs: number): Promise<GatewayHealth> {
  const url = `${gatewayUrl}/health`;
  const timeout = AbortSignal.timeout(timeoutMs);
  let response: Response;
  try {
    response = await fetch(url, { headers: { accept: 'application/json', 'user-agent': 'ward-console' }, signal: timeout, redirect: 'manual' });
  } catch (error) {
    return { ok: false, url: gatewayUrl, reason: timeout.aborted ? `no answer within ${timeoutMs} ms` : causeOf(error) };
  }
  let body: unknown;
  try {
    body = JSON.parse(await response.text());
  } catch {
    if (timeout.aborted) return { ok: false, url: gatewayUrl, reason: `no whole answer within ${timeoutMs} ms` };
    body = undefined;
  }
  if (response.status !== 200 || !isRecord(body) || !Array.isArray(body.agents)) {
    return { ok: false, url: gatewayUrl, reason: `it answered HTTP ${response.status}${isRecord(body) ? '' : ' without JSON'}; is GATEWAY_URL the gateway's address?` };
  }
  return {
    ok: true,
    url: gatewayUrl,
    status: typeof body.status === 'string' ? body.status : 'unknown',
    version: typeof body.version === 'string' ? body.version : null,
    uptimeS: typeof body.uptime_s === 'number' ? body.uptime_s : null,
    agents: body.agents.filter(isRecord).map(agentOf),
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
    starts: number(raw.starts) ?? 0,
    restarts: number(raw.restarts) ?? 0,
    consecutive_failures: number(raw.consecutive_failures) ?? 0,
    running_since: text(raw.running_since),
    last_start_at: text(raw.last_start_at),
    last_exit: exit ? { code: number(exit.code), signal: text(exit.signal), at: text(exit.at) ?? '' } : null,
    last_error: text(raw.last_error),
    last_used_at: text(raw.last_used_at),
    dependencies: Array.isArray(raw.dependencies) ? raw.dependencies.filter((item): item is string => typeof item === 'string') : [],
  };
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
