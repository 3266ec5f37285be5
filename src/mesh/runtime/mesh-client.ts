/**
 * A small mesh JSON-RPC client for agents calling agents (and for the benchmark): mints and reuses
 * its own HS256 token, sends `X-Agent-ID`, passes on `traceparent`, and signs bodies when given a
 * signer (`DID_VERIFY`).
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../core/clock.ts';
import { systemClock } from '../../core/clock.ts';
import { issueMeshToken } from './auth.ts';
import { SIGNATURE_HEADER } from './did/body-signature.ts';
import type { JsonRpcErrorObject } from './mesh-errors.ts';
import { nextTraceparent } from './trace-context.ts';

/** Signs a request body for `X-Mesh-Signature`. */
export type BodySigner = (body: Uint8Array) => Promise<string>;

export type MeshClientOptions = {
  /** The agent's JSON-RPC URL: its `/`, or the gateway's `/rpc/<alias>`. */
  readonly url: string;
  readonly secret: string;
  /** The calling agent's DID (`sub` and `X-Agent-ID`). */
  readonly sub: string;
  readonly tokenTtlSeconds?: number;
  readonly signer?: BodySigner;
  readonly timeoutMs?: number;
  readonly clock?: Clock;
};

/** A JSON-RPC error answer from the other side. */
export class MeshRemoteError extends Error {
  readonly code: number;
  readonly data: unknown;
  constructor(error: JsonRpcErrorObject) {
    super(error.message);
    this.name = 'MeshRemoteError';
    this.code = error.code;
    this.data = error.data;
  }
}

export type MeshClient = {
  call(method: string, params: unknown, options?: { traceparent?: string }): Promise<unknown>;
};

export function createMeshClient(options: MeshClientOptions): MeshClient {
  const clock = options.clock ?? systemClock;
  const ttl = options.tokenTtlSeconds ?? 300;
  let cached: { token: string; renewAt: number } | undefined;
  const token = async (): Promise<string> => {
    const now = clock.now().getTime();
    if (cached && cached.renewAt > now) return cached.token;
    const fresh = await issueMeshToken({ secret: options.secret, sub: options.sub, ttlSeconds: ttl, clock });
    cached = { token: fresh, renewAt: now + ttl * 800 };
    return fresh;
  };
  return {
    async call(method, params, callOptions = {}) {
      const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: randomUUID(), method, params }));
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        authorization: `Bearer ${await token()}`,
        'x-agent-id': options.sub,
        traceparent: nextTraceparent(callOptions.traceparent),
      };
      if (options.signer) headers[SIGNATURE_HEADER] = await options.signer(body);
      const response = await fetch(options.url, {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
      });
      const answer = (await response.json()) as { result?: unknown; error?: JsonRpcErrorObject };
      if (answer.error) throw new MeshRemoteError(answer.error);
      return answer.result;
    },
  };
}
