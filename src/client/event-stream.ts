/**
 * The registry's change stream (contract §6) as the client opens it: the live response is handed
 * back, not its text, so the caller reads or forwards the body as it arrives.
 */
import type { RegistryAnswer } from './registry-answer.ts';
import { describe, interpret, queryString, unavailable, type CallOptions, type Transport } from './registry-transport.ts';

type Failed = Extract<RegistryAnswer, { ok: false }>;

/** Where to resume: a cursor from the history, or the id of the last event seen (`Last-Event-ID`). */
export type StreamPosition = { cursor?: string | undefined; lastEventId?: string | undefined };

/**
 * Opens `GET /v1/events/stream`. Only the connection is bounded by the transport's timeout;
 * `call.signal` ends the stream.
 */
export async function openEventStream(transport: Transport, position: StreamPosition, call: CallOptions = {}): Promise<{ ok: true; response: Response } | Failed> {
  const { timeoutMs } = transport;
  const connect = AbortSignal.timeout(timeoutMs);
  const stop = new AbortController();
  const signal = call.signal ? AbortSignal.any([call.signal, stop.signal]) : stop.signal;
  const abortOnConnectTimeout = () => stop.abort(connect.reason);
  connect.addEventListener('abort', abortOnConnectTimeout, { once: true });
  const headers: Record<string, string> = {
    ...transport.headers,
    accept: 'text/event-stream',
    ...(position.lastEventId ? { 'last-event-id': position.lastEventId } : {}),
  };
  try {
    const response = await transport.fetch(`${transport.baseUrl}/v1/events/stream${queryString({ cursor: position.cursor })}`, { headers, signal, redirect: 'manual' });
    connect.removeEventListener('abort', abortOnConnectTimeout);
    if (response.ok && response.body) return { ok: true as const, response };
    return interpret<never>(transport, response.status, response.headers, await response.text()) as Failed;
  } catch (error) {
    connect.removeEventListener('abort', abortOnConnectTimeout);
    if (connect.aborted) return unavailable(transport, null, `The registry did not answer within ${timeoutMs} ms.`, { cause: 'timeout', timeout_ms: timeoutMs });
    return unavailable(transport, null, `The registry could not be reached (${describe(error)}).`, { cause: describe(error) });
  }
}
