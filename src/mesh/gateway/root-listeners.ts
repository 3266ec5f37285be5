/**
 * Root listeners (`GATEWAY_ROOT_LISTENERS`, docs/mesh.md "An agent at a host's root"): an agent of the
 * gateway presented at the root of a listener of its own, as A2A clients expect to find one agent per
 * host. Each listener maps the agent's A2A paths onto the gateway's own routes for it and hands the
 * request to the gateway app (`app.routing`), so authentication, the PHI guard, lazy start, the card
 * memory, the task log and the metrics are the gateway's, unchanged:
 *
 *   POST /                           → POST /rpc/<alias>/      (JSON-RPC, SSE)
 *   GET  /.well-known/agent-card.json → the card
 *   GET  /.well-known/jwks.json       → the key the card is signed with (the card's `jku`)
 *   GET  /health                     → GET /rpc/<alias>/health
 *   GET  /ws (upgrade)               → GET /rpc/<alias>/ws
 *
 * Anything else is refused by the listener itself: 404 with the gateway's JSON-RPC envelope (-32601),
 * and an upgrade elsewhere is answered 404 and closed. The agent's card names the listener's root as
 * its URL (the gateway gives it as `AGENT_PUBLIC_URL` when it starts the agent).
 */
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { ConfigError } from '../../core/env-schema.ts';
import { rootListenerPorts, type MeshConfig } from '../mesh-config.ts';
import { failure } from '../runtime/jsonrpc.ts';
import { meshErrorObject } from '../runtime/mesh-errors.ts';

export type RootListenerOptions = {
  readonly config: MeshConfig;
  /** Filled with each alias's listener URL (`http://host:port/`) once it listens. */
  readonly rootUrls: Map<string, string>;
};

/** The gateway path a root-listener request maps to, or undefined when the listener refuses it. */
export function rootRoute(alias: string, method: string | undefined, url: string | undefined): string | undefined {
  const raw = url ?? '/';
  const queryAt = raw.indexOf('?');
  const path = queryAt === -1 ? raw : raw.slice(0, queryAt);
  const query = queryAt === -1 ? '' : raw.slice(queryAt);
  const read = method === 'GET' || method === 'HEAD';
  if (path === '/' && method === 'POST') return `/rpc/${alias}/${query}`;
  if (path === '/.well-known/agent-card.json' && read) return `/rpc/${alias}/.well-known/agent-card.json${query}`;
  if (path === '/.well-known/jwks.json' && read) return `/rpc/${alias}/.well-known/jwks.json${query}`;
  if (path === '/health' && read) return `/rpc/${alias}/health${query}`;
  return undefined;
}

function refuse(alias: string, response: ServerResponse): void {
  const body = JSON.stringify(
    failure(null, meshErrorObject('METHOD_NOT_FOUND', `No such path. This listener presents the agent ${alias}: POST / (JSON-RPC), GET /.well-known/agent-card.json, GET /.well-known/jwks.json, GET /health, GET /ws.`)),
  );
  response.writeHead(404, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  response.end(body);
}

function refuseUpgrade(socket: Duplex): void {
  socket.end(`HTTP/1.1 404 ${STATUS_CODES[404]}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
}

function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address();
      resolve(address && typeof address === 'object' ? address.port : port);
    });
  });
}

/** One listener for `alias`, handing what it accepts to the gateway app. */
function rootServer(app: FastifyInstance, alias: string): Server {
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const target = rootRoute(alias, request.method, request.url);
    if (target === undefined) return refuse(alias, response);
    request.url = target;
    app.routing(request, response);
  });
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const raw = request.url ?? '/';
    const queryAt = raw.indexOf('?');
    if ((queryAt === -1 ? raw : raw.slice(0, queryAt)) !== '/ws') return refuseUpgrade(socket);
    request.url = `/rpc/${alias}/ws${queryAt === -1 ? '' : raw.slice(queryAt)}`;
    app.server.emit('upgrade', request, socket, head);
  });
  return server;
}

/** The `ward-root-listeners` plugin: starts every configured listener, and closes them with the app. */
export const rootListeners = fastifyPlugin<RootListenerOptions>(
  async (app, options) => {
    const { config, rootUrls } = options;
    const servers: Server[] = [];
    const close = async () => {
      await Promise.all(
        servers.map(
          (server) =>
            new Promise<void>((closed) => {
              server.close(() => closed());
              server.closeAllConnections();
            }),
        ),
      );
    };
    app.addHook('onClose', close);
    const host = config.MESH_HOST === '0.0.0.0' ? '127.0.0.1' : config.MESH_HOST;
    try {
      for (const [alias, port] of rootListenerPorts(config)) {
        if (!app.meshFleet.has(alias)) throw new ConfigError('GATEWAY_ROOT_LISTENERS', `${alias} is not an agent of the manifest`);
        const server = rootServer(app, alias);
        servers.push(server);
        const bound = await listen(server, config.MESH_HOST, port);
        rootUrls.set(alias, `http://${host}:${bound}/`);
        app.log.info({ alias, url: rootUrls.get(alias) }, 'agent at the root of its own listener');
      }
    } catch (error) {
      await close();
      throw error;
    }
  },
  { name: 'ward-root-listeners', fastify: '5.x', decorators: { fastify: ['meshFleet'] } },
);
