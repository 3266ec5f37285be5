/**
 * The gateway's own answers are always JSON-RPC envelopes (contract §10), addressed to the ids of
 * the payload it refuses: one error per request of a batch, `id: null` when none can be read.
 */
import { failure, parseValue, requestIds, type JsonRpcFailure } from '../runtime/jsonrpc.ts';
import type { JsonRpcErrorObject } from '../runtime/mesh-errors.ts';

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
