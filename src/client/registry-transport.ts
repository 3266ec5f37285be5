/**
 * How the client speaks HTTP to a registry: one request, its deadline and its outcome as a
 * {@link RegistryAnswer}. Every typed call of the registry client and of the federation client
 * (./federation-client.ts) goes through {@link send}, so the timeout, the headers, the redirect policy,
 * the size cap and the mapping of failures to envelopes are written once. Nothing here throws for what
 * the network or the registry does.
 */
import { errorEnvelope, type ErrorEnvelope } from '../core/errors.ts';
import { BodyTooLargeError, readBodyCapped } from '../core/http/read-capped.ts';
import { PrivateAddressError } from '../core/net/guarded-fetch.ts';
import type { RegistryAnswer } from './registry-answer.ts';

/** Per-call options: cancellation, and the headers of a write (contract §2). */
export type CallOptions = { signal?: AbortSignal | undefined; idempotencyKey?: string; ifMatch?: string; headers?: Record<string, string> };

/** What one request needs beyond its call options: a body, and a deadline of its own. */
export type SendOptions = CallOptions & { body?: unknown; timeoutMs?: number };

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** One registry as the client reaches it; made by {@link createTransport}, read by {@link send}. */
export type Transport = {
  /** Without a trailing slash; request paths are appended to it as they are. */
  readonly baseUrl: string;
  readonly fetch: typeof fetch;
  /** Per request, connection to last byte, unless the call gives its own. */
  readonly timeoutMs: number;
  /** Sent with every request (accept, user agent, credential). */
  readonly headers: Readonly<Record<string, string>>;
  /** The setting that holds `baseUrl`, named in messages when it looks wrong. */
  readonly setting: string;
  /** `manual` for the client (a credential only goes to the configured URL); `error` between registries. */
  readonly redirect: RequestRedirect;
  /** The largest body read; past it the answer is a `too_large` failure. Unset: no cap. */
  readonly maxBytes?: number | undefined;
};

export type TransportOptions = {
  /** The registry's base URL, without the `/v1`. */
  baseUrl: string;
  /** Default the global `fetch`. */
  fetch?: typeof fetch | undefined;
  /** Per request, connection to last byte; default 10 000. */
  timeoutMs?: number | undefined;
  /** Omitted: no `user-agent` header of the client's own. */
  userAgent?: string | undefined;
  /** Sent as `Authorization: Bearer …`. */
  credential?: string | undefined;
  /** The setting that holds `baseUrl`, named in messages; default `REGISTRY_URL`. */
  urlSetting?: string | undefined;
  /** Default `manual`: a redirect comes back as an answer, never followed. */
  redirect?: RequestRedirect | undefined;
  /** The largest body read, in bytes; default no cap. */
  maxBytes?: number | undefined;
};

/** Defaults: 10 000 ms per request, `REGISTRY_URL` as the setting, redirects returned as they are, no cap. */
export function createTransport(options: TransportOptions): Transport {
  return {
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    fetch: options.fetch ?? fetch,
    timeoutMs: options.timeoutMs ?? 10_000,
    setting: options.urlSetting ?? 'REGISTRY_URL',
    redirect: options.redirect ?? 'manual',
    maxBytes: options.maxBytes,
    headers: {
      accept: 'application/json',
      ...(options.userAgent === undefined ? {} : { 'user-agent': options.userAgent }),
      ...(options.credential ? { authorization: `Bearer ${options.credential}` } : {}),
    },
  };
}

/** Any registry request; the typed calls are this with a path and a shape. */
export async function send<T>(transport: Transport, method: HttpMethod, path: string, init: SendOptions = {}): Promise<RegistryAnswer<T>> {
  const timeoutMs = init.timeoutMs ?? transport.timeoutMs;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
  const headers: Record<string, string> = {
    ...transport.headers,
    ...init.headers,
    ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    ...(init.idempotencyKey ? { 'x-idempotency-key': init.idempotencyKey } : {}),
    ...(init.ifMatch ? { 'if-match': init.ifMatch } : {}),
  };
  let status: number | null = null;
  try {
    const response = await transport.fetch(`${transport.baseUrl}${path}`, {
      method,
      headers,
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      signal,
      redirect: transport.redirect,
    });
    status = response.status;
    const text = transport.maxBytes === undefined ? await response.text() : await readBodyCapped(response, transport.maxBytes);
    return interpret<T>(transport, response.status, response.headers, text);
  } catch (error) {
    if (timeout.aborted) {
      return unavailable(transport, status, `The registry did not answer within ${timeoutMs} ms.`, { cause: 'timeout', timeout_ms: timeoutMs });
    }
    if (init.signal?.aborted) return unavailable(transport, status, 'The request was cancelled.', { cause: 'cancelled' });
    if (error instanceof BodyTooLargeError) {
      return unavailable(transport, status, `The answer is larger than ${error.maxBytes} bytes.`, { cause: 'too_large', max_bytes: error.maxBytes });
    }
    if (error instanceof PrivateAddressError) {
      return unavailable(transport, status, `The registry's address is refused here (${error.message}).`, { cause: 'private_address' });
    }
    const cause = describe(error);
    return unavailable(transport, status, `The registry could not be reached (${cause}).`, { cause });
  }
}

/**
 * Why a call gave no usable answer: the transport's own reasons (a deadline, a cancellation, a body
 * over the cap, a refused private address, the network), or `answer` when an HTTP answer came back
 * and was an error or not the registry's kind of answer (see `status`).
 */
export type FailureKind = 'timeout' | 'cancelled' | 'too_large' | 'private_address' | 'network' | 'answer';

/** The {@link FailureKind} of a failed answer. */
export function failureKind(answer: Extract<RegistryAnswer, { ok: false }>): FailureKind {
  const cause = answer.envelope.error.details?.cause;
  if (cause === 'timeout' || cause === 'cancelled' || cause === 'too_large' || cause === 'private_address') return cause;
  return typeof cause === 'string' ? 'network' : 'answer';
}

/** A failure the client makes itself (no usable answer came back), as `SERVICE_UNAVAILABLE`. */
export function unavailable(transport: Transport, status: number | null, message: string, details: Record<string, unknown>): Extract<RegistryAnswer<never>, { ok: false }> {
  const envelope = errorEnvelope('SERVICE_UNAVAILABLE', message, { registry_url: transport.baseUrl, ...details });
  return { ok: false, status, headers: null, text: JSON.stringify(envelope), envelope };
}

/** An HTTP answer read: a success, the registry's error envelope, or a client-made failure saying why it is neither. */
export function interpret<T>(transport: Transport, status: number, headers: Headers, text: string): RegistryAnswer<T> {
  const body = parseJson(text);
  if (status >= 200 && status < 300 && (body !== undefined || status === 204)) return { ok: true, status, headers, text, body: body as T };
  if (status >= 400 && isErrorEnvelope(body)) return { ok: false, status, headers, text, envelope: body };
  // Not the registry's kind of answer: a proxy page, a redirect, a wrong base URL.
  const { setting } = transport;
  const why =
    status >= 300 && status < 400
      ? `a redirect to ${headers.get('location') ?? 'elsewhere'}; set ${setting} to the final address`
      : status < 300
        ? `a body that is not JSON; is ${setting} the registry base URL?`
        : `no JSON error envelope; is ${setting} the registry base URL?`;
  return { ...unavailable(transport, status, `The registry answered HTTP ${status} with ${why}.`, { status }), headers };
}

/** `?name=value&…` for the defined values (arrays repeat the name), or '' when there are none. */
export function queryString(values: object): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined || value === null) continue;
    for (const item of [value].flat()) search.append(name, String(item));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

/** One path segment from an id (agent, registry, key). */
export const segment = (value: string): string => encodeURIComponent(value);

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

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** A network failure in a few words: undici puts the useful part (ECONNREFUSED, ENOTFOUND…) in `cause`. */
export function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  if (cause && typeof cause.code === 'string') return cause.code;
  if (cause && typeof cause.message === 'string') return cause.message;
  return error instanceof Error ? error.message : String(error);
}
