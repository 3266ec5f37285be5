/**
 * Which A2A version a request speaks (specification §3.6): the `A2A-Version` header, or the query
 * parameter of the same name; and whether a JSON-RPC body is a 1.0 call (a 1.0 method name, or the
 * header saying 1.x), which decides how an authentication failure is told (agent-endpoints.ts).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyRequest } from 'fastify';
import { firstHeader } from '../../core/http/http-kit.ts';
import { wantsA2aV1 } from './card.ts';
import type { JsonRpcId } from './jsonrpc.ts';

/**
 * The error an A2A 1.0 call is refused with when its credentials are (HTTP 401, `WWW-Authenticate`):
 * A2A 1.0 numbers its own errors -32001 to -32099 and reads -32001 as TaskNotFoundError, so the
 * contract's -32001 would tell a 1.0 client its task is gone. -32000 is JSON-RPC's implementation
 * range, outside A2A's; `data.reason` is the contract's.
 */
export const A2A_V1_AUTHENTICATION_ERROR = { code: -32000, message: 'Authentication required' } as const;

/** A2A 1.0's JSON-RPC method names (§5.3); the contract's and v0.3's are lower-case with a slash. */
const A2A_V1_METHOD = /^[A-Z][A-Za-z]+$/;

/** The version the caller asked for: header first, then `?A2A-Version=`. */
export function requestedA2aVersion(request: FastifyRequest): string | undefined {
  const header = firstHeader(request.headers, 'a2a-version');
  if (header !== undefined) return header;
  const query = request.query as Record<string, unknown> | undefined;
  const value = query?.['A2A-Version'];
  return typeof value === 'string' ? value : undefined;
}

/** The id of a single JSON-RPC request that is an A2A 1.0 call; undefined for anything else (or a batch). */
export function a2aV1Call(headers: IncomingHttpHeaders, body: Buffer): { id: JsonRpcId } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const { method, id } = value as { method?: unknown; id?: unknown };
  const isV1 = (typeof method === 'string' && A2A_V1_METHOD.test(method)) || wantsA2aV1(firstHeader(headers, 'a2a-version'));
  if (!isV1) return undefined;
  return { id: typeof id === 'string' || typeof id === 'number' ? id : null };
}
