/**
 * The MCP HTTP transports as a Fastify plugin (contract §1, §11): streamable HTTP at `/mcp` and the
 * older SSE transport at `/sse` (stream) + `/messages` (posts), for clients of either generation. The
 * MCP SDK's transports take Node's request and response, so each route hands them the raw pair
 * (`reply.hijack()`) and leaves the body unread for the transport to read and check itself.
 */
import type { ServerResponse } from 'node:http';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { isLoopback } from '../../core/http/loopback.ts';

/** Paths of the two HTTP transports on the one port. */
export const MCP_PATHS = { streamableHttp: '/mcp', sse: '/sse', sseMessages: '/messages' } as const;

export type McpHttpOptions = {
  /** The address the server listens on: on a loopback one, only requests naming it are served. */
  host: string;
  /** A fresh MCP server: each SSE session and each streamable HTTP request gets its own. */
  createServer: () => Server;
  log: (line: string) => void;
};

declare module 'fastify' {
  interface FastifyInstance {
    /** Open SSE sessions (streamable HTTP keeps none). */
    mcpSseSessions: ReadonlyMap<string, SSEServerTransport>;
  }
}

const TEXT = 'text/plain; charset=utf-8';

/**
 * Builds the MCP HTTP server without listening (transports/http.ts listens). No logger of its own
 * (stdout stays clean; lines go through `log`), no automatic HEAD routes (a HEAD must not open an SSE
 * session), and open SSE streams are cut when it closes.
 */
export async function buildMcpHttp(options: McpHttpOptions): Promise<FastifyInstance> {
  const app = Fastify({ logger: false, exposeHeadRoutes: false, forceCloseConnections: true });
  await app.register(mcpHttp, options);
  return app;
}

/**
 * - Streamable HTTP runs stateless: every POST gets its own server and transport, answered with plain
 *   JSON; any other method is 405. The tools keep no state between calls, so sessions would only add
 *   memory to leak.
 * - On a loopback address the `Host` header must name that address, which stops DNS rebinding: a web
 *   page must not reach a local server that acts with the registry API key.
 */
export const mcpHttp = fastifyPlugin<McpHttpOptions>(
  async (app, options) => {
    const sseSessions = new Map<string, SSEServerTransport>();
    app.decorate('mcpSseSessions', sseSessions);
    app.addHook('preClose', async () => {
      for (const transport of sseSessions.values()) await transport.close();
    });

    app.addHook('onRequest', async (request, reply) => {
      if (isLoopback(options.host) && !loopbackHosts(options.host, request).has(request.headers.host ?? ''))
        return plain(reply, 403, 'Host not allowed');
    });
    // The transports read and check the body themselves (its type, its size, its JSON).
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_request, _payload, done) => done(null));

    app.all(MCP_PATHS.streamableHttp, async (request, reply) => {
      // Stateless: no stream for server-initiated messages (GET) and no session to end (DELETE);
      // 405 is the answer the MCP specification gives for both, and clients expect it.
      if (request.method !== 'POST') return plain(reply, 405, 'Method not allowed: POST only', { allow: 'POST' });
      await hijacked(reply, options.log, async (response) => {
        const server = options.createServer();
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
        response.once('close', () => void server.close());
        await server.connect(transport);
        await transport.handleRequest(request.raw, response);
      });
    });

    app.get(MCP_PATHS.sse, async (_request, reply) =>
      hijacked(reply, options.log, async (response) => {
        const server = options.createServer();
        const transport = new SSEServerTransport(MCP_PATHS.sseMessages, response);
        sseSessions.set(transport.sessionId, transport);
        transport.onclose = () => sseSessions.delete(transport.sessionId);
        response.once('close', () => void server.close());
        await server.connect(transport);
      }),
    );

    app.post<{ Querystring: { sessionId?: string } }>(MCP_PATHS.sseMessages, async (request, reply) => {
      const transport = sseSessions.get(typeof request.query.sessionId === 'string' ? request.query.sessionId : '');
      if (!transport) return plain(reply, 404, 'No such SSE session');
      await hijacked(reply, options.log, (response) => transport.handlePostMessage(request.raw, response));
    });

    app.setNotFoundHandler(async (_request, reply) =>
      plain(reply, 404, `Not found. MCP is at ${MCP_PATHS.streamableHttp} (streamable HTTP) and ${MCP_PATHS.sse} (SSE).`),
    );
  },
  { name: 'ward-mcp-http', fastify: '5.x' },
);

/** The `Host` values that name this server on a loopback address: its own, and the loopback names, at its port. */
function loopbackHosts(host: string, request: FastifyRequest): ReadonlySet<string> {
  const port = request.socket.localPort;
  const hostInUrl = host.includes(':') ? `[${host}]` : host;
  return new Set([`${hostInUrl}:${port}`, `localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`]);
}

/**
 * Hands the raw response to an MCP SDK transport. A failure is logged; the client gets a plain 500
 * if nothing was sent yet, or the end of what was.
 */
async function hijacked(reply: FastifyReply, log: (line: string) => void, serve: (response: ServerResponse) => Promise<void>): Promise<void> {
  reply.hijack();
  const response = reply.raw;
  try {
    await serve(response);
  } catch (error) {
    log(`ward mcp: request failed: ${error instanceof Error ? error.message : String(error)}`);
    if (!response.headersSent) response.writeHead(500, { 'content-type': TEXT }).end('Internal error');
    else response.end();
  }
}

function plain(reply: FastifyReply, status: number, text: string, headers: Record<string, string> = {}): FastifyReply {
  return reply.code(status).headers(headers).type(TEXT).send(text);
}
