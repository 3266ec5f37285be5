import type { FastifyInstance } from 'fastify';
import { failure } from './jsonrpc.ts';
import { meshErrorObject } from './mesh-errors.ts';

/**
 * The framework's own failures (a body over 1 MiB, an unknown path…) answered as JSON-RPC envelopes,
 * never as bare HTTP error bodies; the HTTP status still says what happened (413, 404). Shared by
 * agents and the gateway.
 */
export function answerFrameworkErrorsAsJsonRpc(app: FastifyInstance, notFoundMessage: string): void {
  app.setNotFoundHandler((_request, reply) =>
    reply.code(404).type('application/json').send(failure(null, meshErrorObject('METHOD_NOT_FOUND', notFoundMessage))),
  );
  app.setErrorHandler((error: { statusCode?: number; code?: string }, request, reply) => {
    const status = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    if (status === 500) request.log.error({ err: error }, 'request failed');
    const body =
      status < 500 ? meshErrorObject('INVALID_REQUEST', undefined, { reason: error.code ?? `HTTP ${status}` }) : meshErrorObject('INTERNAL_ERROR');
    return reply.code(status).type('application/json').send(failure(null, body));
  });
}
