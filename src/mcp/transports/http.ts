import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isLoopback } from '../../core/http/loopback.ts';

/** Paths of the two HTTP transports on the one port. */
export const MCP_PATHS = { streamableHttp: '/mcp', sse: '/sse', sseMessages: '/messages' } as const;

export type HttpService = {
  /** `http://<host>:<port>`, the port as bound (so `0` shows the one chosen). */
  readonly url: string;
  /** Open SSE sessions (streamable HTTP keeps none). */
  readonly sseSessions: () => number;
  close(): Promise<void>;
};

export type HttpServiceOptions = {
  host: string;
  port: number;
  /** A fresh MCP server: each SSE session and each streamable HTTP request gets its own. */
  createServer: () => Server;
  log: (line: string) => void;
};

/**
 * Serves MCP over HTTP on one port (contract §1, §11): streamable HTTP at `/mcp` and the older SSE
 * transport at `/sse` (stream) + `/messages` (posts), for clients of either generation.
 * - Streamable HTTP runs stateless: every POST gets its own server and transport, answered with plain
 *   JSON; GET and DELETE are 405. The tools keep no state between calls, so sessions would only add
 *   memory to leak.
 * - On a loopback address the `Host` header must name that address, which stops DNS rebinding: a web
 *   page must not reach a local server that acts with the registry API key.
 */
export async function startHttpService(options: HttpServiceOptions): Promise<HttpService> {
  const sseSessions = new Map<string, SSEServerTransport>();
  let allowedHosts: ReadonlySet<string> | undefined;

  const httpServer = createServer((request, response) => {
    route(request, response).catch((error: unknown) => {
      options.log(`ward mcp: request failed: ${error instanceof Error ? error.message : String(error)}`);
      if (!response.headersSent) plain(response, 500, 'Internal error');
      else response.end();
    });
  });

  async function route(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (allowedHosts && !allowedHosts.has(request.headers.host ?? ''))
      return plain(response, 403, 'Host not allowed');
    const { pathname, searchParams } = new URL(request.url ?? '/', 'http://localhost');
    if (pathname === MCP_PATHS.streamableHttp) {
      // Stateless: no stream for server-initiated messages (GET) and no session to end (DELETE);
      // 405 is the answer the MCP specification gives for both, and clients expect it.
      if (request.method !== 'POST')
        return plain(response, 405, 'Method not allowed: POST only', { allow: 'POST' });
      return serveStreamable(request, response);
    }
    if (pathname === MCP_PATHS.sse && request.method === 'GET') return openSse(response);
    if (pathname === MCP_PATHS.sseMessages && request.method === 'POST') {
      const transport = sseSessions.get(searchParams.get('sessionId') ?? '');
      if (!transport) return plain(response, 404, 'No such SSE session');
      return transport.handlePostMessage(request, response);
    }
    plain(
      response,
      404,
      `Not found. MCP is at ${MCP_PATHS.streamableHttp} (streamable HTTP) and ${MCP_PATHS.sse} (SSE).`,
    );
  }

  async function serveStreamable(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const server = options.createServer();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    response.once('close', () => void server.close());
    await server.connect(transport);
    await transport.handleRequest(request, response);
  }

  async function openSse(response: ServerResponse): Promise<void> {
    const server = options.createServer();
    const transport = new SSEServerTransport(MCP_PATHS.sseMessages, response);
    sseSessions.set(transport.sessionId, transport);
    transport.onclose = () => sseSessions.delete(transport.sessionId);
    response.once('close', () => void server.close());
    await server.connect(transport);
  }

  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(options.port, options.host, () => {
      httpServer.off('error', reject);
      resolve();
    });
  });
  const { port } = httpServer.address() as AddressInfo;
  const hostInUrl = options.host.includes(':') ? `[${options.host}]` : options.host;
  if (isLoopback(options.host)) {
    allowedHosts = new Set([
      `${hostInUrl}:${port}`,
      `localhost:${port}`,
      `127.0.0.1:${port}`,
      `[::1]:${port}`,
    ]);
  } else {
    options.log(
      `ward mcp: warning: listening on ${options.host}, not loopback; the HTTP transports have no authentication of their own and act with REGISTRY_API_KEY`,
    );
  }

  return {
    url: `http://${hostInUrl}:${port}`,
    sseSessions: () => sseSessions.size,
    async close() {
      for (const transport of sseSessions.values()) await transport.close();
      const closed = new Promise<void>((resolve) => httpServer.close(() => resolve()));
      httpServer.closeAllConnections();
      await closed;
    },
  };
}

function plain(
  response: ServerResponse,
  status: number,
  text: string,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers }).end(text);
}
