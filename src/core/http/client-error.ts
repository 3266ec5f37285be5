/**
 * What Node's HTTP parser refuses before any request exists (a bad request line, control characters
 * in a header, conflicting Content-Length, headers over the limit) answered as a raw HTTP response in
 * the server's own format, then the connection closes. Shared by the registry (its error envelope),
 * the gateway and agents (a JSON-RPC envelope) and the console (a short page). Nothing of the refused
 * request is echoed; a connection already gone is just destroyed.
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';

export type ClientErrorBody = { readonly contentType: string; readonly body: string; readonly headers?: Readonly<Record<string, string>> };

/** 431 for headers over the limit, 400 for anything else the parser refuses. */
export function clientErrorStatus(error: { code?: string }): 400 | 431 {
  return error.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
}

/**
 * The path of the request the parser refused, when the bytes it was parsing still hold its request
 * line (`error.rawPacket`; a request whose headers arrive in several reads may have lost it): a server
 * with several surfaces (the registry's FHIR directory) answers in that surface's format.
 */
export function refusedRequestPath(error: { rawPacket?: unknown }): string | undefined {
  const packet = error.rawPacket;
  if (!Buffer.isBuffer(packet)) return undefined;
  const line = /^[A-Z]{3,7} (\S{1,2048}) HTTP\/1\.[01]\r?\n/.exec(packet.subarray(0, 2100).toString('latin1'));
  return line?.[1];
}

/** A Fastify `clientErrorHandler` answering with `bodyFor(status, error)`. */
export function clientErrorAnswer(bodyFor: (status: 400 | 431, error: Error & { code?: string; rawPacket?: unknown }) => ClientErrorBody) {
  return (error: Error & { code?: string; rawPacket?: unknown }, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const status = clientErrorStatus(error);
    const { contentType, body, headers = {} } = bodyFor(status, error);
    const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Bad Request'}\r\nconnection: close\r\ncontent-type: ${contentType}\r\n${extra}` +
        `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  };
}
