/**
 * Server-sent events for streaming JSON-RPC methods (contract §10): every event's data is a JSON-RPC
 * response with the request's id; `id:` lines carry the task event's sequence number so a client
 * resumes with `Last-Event-ID`; a `: ping` comment keeps idle connections open through proxies.
 */
import type { ServerResponse } from 'node:http';
import { SSE_HEADERS, formatSseComment, formatSseEvent } from '../../../core/http/server-sent-events.ts';
import { failure, success, type JsonRpcId, type RpcStreamItem } from '../jsonrpc.ts';
import type { JsonRpcErrorObject } from '../mesh-errors.ts';

export const SSE_PING_MS = 15_000;

export type SseOptions = {
  /** Answers an error thrown mid-stream (sent as a last JSON-RPC error event). */
  readonly errorFor: (error: unknown) => JsonRpcErrorObject;
  readonly headers?: Record<string, string>;
  readonly pingMs?: number;
};

/** Writes `items` to `raw` as an event stream, then ends it. Stops early if the client goes away. */
export async function writeSseStream(
  raw: ServerResponse,
  id: JsonRpcId,
  items: AsyncIterable<RpcStreamItem>,
  options: SseOptions,
): Promise<void> {
  raw.writeHead(200, { ...SSE_HEADERS, connection: 'keep-alive', ...options.headers });
  raw.flushHeaders();
  const ping = setInterval(() => raw.write(formatSseComment('ping')), options.pingMs ?? SSE_PING_MS);
  ping.unref();
  try {
    for await (const item of items) {
      if (raw.destroyed) break;
      raw.write(formatSseEvent({ ...(item.eventId === undefined ? {} : { id: item.eventId }), data: JSON.stringify(success(id, item.result)) }));
    }
  } catch (error) {
    if (!raw.destroyed) raw.write(formatSseEvent({ data: JSON.stringify(failure(id, options.errorFor(error))) }));
  } finally {
    clearInterval(ping);
    raw.end();
  }
}
