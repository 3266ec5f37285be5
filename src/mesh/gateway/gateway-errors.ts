/**
 * The gateway's own answers are always JSON-RPC envelopes (contract §10), addressed to the ids of
 * the payload it refuses: one error per request of a batch, `id: null` when none can be read.
 */
import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import { failure, parseValue, requestIds, type JsonRpcFailure } from '../runtime/jsonrpc.ts';
import { isMeshRpcError, meshErrorObject, type JsonRpcErrorObject } from '../runtime/mesh-errors.ts';

/** The body decoded, or undefined when it is not JSON. */
export function decodeBody(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

export function errorsFor(decoded: unknown, error: JsonRpcErrorObject): JsonRpcFailure | JsonRpcFailure[] {
  if (decoded === undefined) return failure(null, error);
  const { batch, ids } = requestIds(parseValue(decoded));
  if (!batch || ids.length === 0) return failure(ids[0] ?? null, error);
  return ids.map((id) => failure(id, error));
}

/**
 * The HTTP status of a gateway failure on a route that is not JSON-RPC (the card, the WebSocket
 * upgrade), where the status is the only thing a plain HTTP client reads: unknown alias 404, bad
 * credentials 401, an agent that cannot start 503, anything else 502 (JSON-RPC keeps 200, contract §10).
 */
export function plainHttpStatus(error: unknown): number {
  if (!isMeshRpcError(error)) return 502;
  if (error.errorName === 'AGENT_UNKNOWN') return 404;
  if (error.httpStatus === 401) return 401;
  return error.errorName === 'AGENT_UNAVAILABLE' ? 503 : 502;
}

/** A gateway failure as its JSON-RPC error: a mesh error as it is, anything else logged and answered as -32603. */
export function gatewayErrorObject(log: FastifyBaseLogger, error: unknown): JsonRpcErrorObject {
  if (isMeshRpcError(error)) return error.toErrorObject();
  log.error({ err: error }, 'gateway failure');
  return meshErrorObject('INTERNAL_ERROR');
}

/** Answers one of the gateway's own JSON bodies. */
export function answerJson(reply: FastifyReply, status: number, body: unknown): FastifyReply {
  return reply.code(status).type('application/json').send(body);
}
