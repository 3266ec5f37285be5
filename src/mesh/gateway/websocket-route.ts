/**
 * `GET /rpc/{alias}/ws` (contract §10): the caller is authenticated and the agent started before the
 * upgrade, then the socket is joined to the agent's `/ws` (ws-proxy.ts), holding the agent while it
 * stays open. A refusal is a plain HTTP status with a JSON-RPC envelope.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { firstHeader } from '../../core/http/http-kit.ts';
import { failure } from '../runtime/jsonrpc.ts';
import { nextTraceparent } from '../runtime/trace-context.ts';
import { agentRequestHeaders } from './agent-proxy.ts';
import { answerJson, gatewayErrorObject, plainHttpStatus } from './gateway-errors.ts';
import { proxyWebSocket } from './ws-proxy.ts';

type UpstreamSocket = { readonly url: string; readonly traceparent: string };

/** Registers the WebSocket route on the gateway app. */
export function registerWebSocketRoute(app: FastifyInstance): void {
  const upstreamSockets = new WeakMap<FastifyRequest, UpstreamSocket>();
  app.get<{ Params: { alias: string } }>(
    '/rpc/:alias/ws',
    {
      websocket: true,
      preValidation: async (request, reply) => {
        const { alias } = request.params as { alias: string };
        try {
          await app.meshAuthenticate(request.headers);
          const url = await app.meshFleet.ensure(alias);
          upstreamSockets.set(request, { url: `${url.replace(/^http/, 'ws')}/ws`, traceparent: nextTraceparent(firstHeader(request.headers, 'traceparent')) });
        } catch (error) {
          return answerJson(reply, plainHttpStatus(error), failure(null, gatewayErrorObject(app.log, error)));
        }
      },
    },
    (socket, request) => {
      const { alias } = request.params;
      const target = upstreamSockets.get(request) as UpstreamSocket;
      const release = app.meshFleet.get(alias).holdStream();
      proxyWebSocket(socket, target.url, agentRequestHeaders(request, target.traceparent), release);
    },
  );
}
