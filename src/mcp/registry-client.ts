import { errorEnvelope, type ErrorEnvelope } from '../core/errors.ts';

/** Query of `GET /v1/discover` as the tools send it (spec: Discover). */
export type DiscoverQuery = {
  capability: string;
  jurisdiction?: string;
  protocol?: string;
  purpose_of_use?: string;
  limit?: number;
};

/** Body of `POST /v1/route` as the tools send it (spec: Route; contract §4). */
export type RouteRequest = {
  target: string;
  caller_jurisdiction?: string;
  purpose?: { purpose_of_use: string };
};

/** Body of `POST /v1/agents` (spec: Register agent). */
export type RegistrationBody = {
  display_name: string;
  jurisdiction: string;
  endpoints: Array<{ url: string; protocol: string }>;
  capabilities: { skills: string[]; protocols: string[] };
  trust: { certificates: string[]; signatures: string[]; attestations: string[] };
  description?: string;
};

/**
 * What the registry answered. `text` is the JSON the tool result carries: the registry's own body
 * as received (so signatures inside it stay byte-exact), or an error envelope — the registry's, or
 * one made here when no usable answer came back (`status` is then the HTTP status seen, or null).
 */
export type RegistryAnswer =
  | { ok: true; status: number; text: string; body: unknown }
  | { ok: false; status: number | null; text: string; envelope: ErrorEnvelope };

export type RegistryClient = {
  readonly baseUrl: string;
  /** `GET /.well-known/agent-registry` with the credential, which the registry checks even there. */
  metadata(signal?: AbortSignal): Promise<RegistryAnswer>;
  discover(query: DiscoverQuery, signal?: AbortSignal): Promise<RegistryAnswer>;
  route(body: RouteRequest, signal?: AbortSignal): Promise<RegistryAnswer>;
  /** `idempotencyKey` is a UUID; the same key with the same body replays the first answer. */
  register(body: RegistrationBody, idempotencyKey: string, signal?: AbortSignal): Promise<RegistryAnswer>;
};

export type RegistryClientOptions = {
  /** The registry's base URL, `http(s)://…`, without the `/v1`. */
  baseUrl: string;
  /** A raw API key, sent as `Authorization: Bearer rk_…` (contract §7). */
  apiKey: string;
  /** Per request, connection to last byte. */
  timeoutMs: number;
  userAgent?: string;
  fetch?: typeof fetch;
};

/**
 * An HTTP client for the three registry operations behind the MCP tools, plus the start-up probe.
 * It never throws for what the network or the registry does: every outcome is a {@link RegistryAnswer}.
 * Requests are not retried (the caller sees `retryable` in the envelope and decides), and redirects
 * are not followed, so the API key and a registration body only ever go to `REGISTRY_URL`.
 */
export function createRegistryClient(options: RegistryClientOptions): RegistryClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const fetchImpl = options.fetch ?? fetch;
  const baseHeaders: Record<string, string> = {
    accept: 'application/json',
    authorization: `Bearer ${options.apiKey}`,
    'user-agent': options.userAgent ?? 'ward-mcp',
  };

  async function send(
    method: 'GET' | 'POST',
    path: string,
    init: { body?: unknown; headers?: Record<string, string>; signal?: AbortSignal | undefined },
  ): Promise<RegistryAnswer> {
    const timeout = AbortSignal.timeout(options.timeoutMs);
    const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    const headers = {
      ...baseHeaders,
      ...init.headers,
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    };
    let status: number | null = null;
    try {
      const response = await fetchImpl(`${baseUrl}${path}`, {
        method,
        headers,
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
        signal,
        redirect: 'manual',
      });
      status = response.status;
      return interpret(response.status, response.headers.get('location'), await response.text());
    } catch (error) {
      if (timeout.aborted)
        return unavailable(status, `The registry did not answer within ${options.timeoutMs} ms.`, {
          cause: 'timeout',
          timeout_ms: options.timeoutMs,
        });
      if (init.signal?.aborted)
        return unavailable(status, 'The request was cancelled by the MCP client.', {});
      const cause = describe(error);
      return unavailable(status, `The registry could not be reached (${cause}).`, { cause });
    }
  }

  function unavailable(
    status: number | null,
    message: string,
    details: Record<string, unknown>,
  ): RegistryAnswer {
    const envelope = errorEnvelope('SERVICE_UNAVAILABLE', message, { registry_url: baseUrl, ...details });
    return { ok: false, status, text: JSON.stringify(envelope), envelope };
  }

  function interpret(status: number, location: string | null, text: string): RegistryAnswer {
    const body = parseJson(text);
    if (status >= 200 && status < 300 && body !== undefined) return { ok: true, status, text, body };
    if (status >= 400 && isErrorEnvelope(body)) return { ok: false, status, text, envelope: body };
    // Not the registry's kind of answer: a proxy page, a redirect, a wrong REGISTRY_URL path.
    const why =
      status >= 300 && status < 400
        ? `a redirect to ${location ?? 'elsewhere'}; set REGISTRY_URL to the final address`
        : status < 300
          ? 'a body that is not JSON; is REGISTRY_URL the registry base URL?'
          : 'no JSON error envelope; is REGISTRY_URL the registry base URL?';
    return unavailable(status, `The registry answered HTTP ${status} with ${why}.`, { status });
  }

  return {
    baseUrl,
    metadata: (signal) => send('GET', '/.well-known/agent-registry', { signal }),
    discover(query, signal) {
      const search = new URLSearchParams();
      for (const [name, value] of Object.entries(query))
        if (value !== undefined) search.set(name, String(value));
      return send('GET', `/v1/discover?${search.toString()}`, { signal });
    },
    route: (body, signal) => send('POST', '/v1/route', { body, signal }),
    register: (body, idempotencyKey, signal) =>
      send('POST', '/v1/agents', { body, headers: { 'x-idempotency-key': idempotencyKey }, signal }),
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** `{"error":{"code","message",…}}` (spec: Error envelope). */
export function isErrorEnvelope(value: unknown): value is ErrorEnvelope {
  if (typeof value !== 'object' || value === null) return false;
  const error = (value as { error?: unknown }).error;
  return (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as { code?: unknown }).code === 'string' &&
    typeof (error as { message?: unknown }).message === 'string'
  );
}

/** A network failure in a few words: undici puts the useful part (ECONNREFUSED, ENOTFOUND…) in `cause`. */
function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  if (cause && typeof cause.code === 'string') return cause.code;
  if (cause && typeof cause.message === 'string') return cause.message;
  return error instanceof Error ? error.message : String(error);
}
