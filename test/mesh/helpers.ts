import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { systemClock, type Clock } from '../../src/core/clock.ts';
import { loadMeshConfig, type MeshConfig } from '../../src/mesh/mesh-config.ts';
import { buildAgentApp } from '../../src/mesh/runtime/agent-runtime.ts';
import { issueMeshToken } from '../../src/mesh/runtime/auth.ts';
import { DENY_ALL_CONSENT, type ConsentChecker } from '../../src/mesh/runtime/consent-requirement.ts';
import type { MeshAgent } from '../../src/mesh/runtime/mesh-agent.ts';

type Hookable = Pick<TestContext, 'after'>;

export const SECRET = 'mesh-dev-secret-change-me';
export const CALLER = 'did:web:localhost:agents:tester';

/** A fresh directory removed when the test ends. */
export function tempDir(t: Hookable, prefix = 'ward-mesh-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A mesh configuration on a fresh data directory; `env` overrides. */
export function meshConfig(t: Hookable, env: Record<string, string> = {}): MeshConfig {
  return loadMeshConfig({ REGISTRY_ENV: 'test', MESH_DATA_DIR: tempDir(t), MESH_LOG_LEVEL: 'silent', ...env });
}

export async function token(sub = CALLER, options: { ttlSeconds?: number; scope?: string; secret?: string } = {}): Promise<string> {
  return issueMeshToken({ secret: options.secret ?? SECRET, sub, ttlSeconds: options.ttlSeconds ?? 300, ...(options.scope ? { scope: options.scope } : {}) });
}

/** Authorization and X-Agent-ID for `sub`. */
export async function authHeaders(sub = CALLER): Promise<Record<string, string>> {
  return { authorization: `Bearer ${await token(sub)}`, 'x-agent-id': sub, 'content-type': 'application/json' };
}

export type RpcAnswer = { status: number; headers: Headers; body: any };

/** POSTs a JSON-RPC payload (object, array or raw text) and decodes the answer. */
export async function post(url: string, payload: unknown, headers: Record<string, string>): Promise<RpcAnswer> {
  const response = await fetch(url, {
    method: 'POST',
    headers,
    body: typeof payload === 'string' ? payload : JSON.stringify(payload),
    signal: AbortSignal.timeout(20_000),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

let nextId = 1;

/** One JSON-RPC call as `sub`; returns the whole response envelope. */
export async function rpc(url: string, method: string, params: unknown, sub = CALLER): Promise<any> {
  const answer = await post(url, { jsonrpc: '2.0', id: nextId++, method, params }, await authHeaders(sub));
  return answer.body;
}

export type ListeningAgent = { app: FastifyInstance; url: string; config: MeshConfig };

/** An agent app listening on 127.0.0.1 on a free port; closed when the test ends. */
export async function listenAgent(
  t: Hookable,
  agent: MeshAgent,
  options: { config?: MeshConfig; consent?: ConsentChecker; clock?: Clock } = {},
): Promise<ListeningAgent> {
  const config = options.config ?? meshConfig(t);
  const app = await buildAgentApp({ agent, config, consent: options.consent ?? DENY_ALL_CONSENT, clock: options.clock ?? systemClock, logger: false });
  t.after(() => app.close());
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const port = address && typeof address === 'object' ? address.port : 0;
  return { app, url: `http://127.0.0.1:${port}/`, config };
}

/** A text message from the caller. */
export function textMessage(text: string) {
  return { kind: 'message', role: 'user', parts: [{ kind: 'text', text }] };
}

export function dataMessage(data: Record<string, unknown>) {
  return { kind: 'message', role: 'user', parts: [{ kind: 'data', data }] };
}

/** A promise with its resolve handle: lets a test decide when an executor's turn ends. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => (resolve = done));
  return { promise, resolve };
}

export { eventually } from '../helpers/eventually.ts';

export type SseEvent = { id?: string; data: any };

/**
 * Reads SSE events from a fetch response as they arrive. `next()` resolves with the next event or
 * undefined at the end of the stream.
 */
export function sseReader(response: Response): { next(): Promise<SseEvent | undefined>; cancel(): Promise<void> } {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  return {
    async next() {
      for (;;) {
        const boundary = buffer.indexOf('\n\n');
        if (boundary >= 0) {
          const block = buffer.slice(0, boundary);
          buffer = buffer.slice(boundary + 2);
          const lines = block.split('\n').filter((line) => !line.startsWith(':'));
          if (lines.length === 0) continue;
          const id = lines.find((line) => line.startsWith('id: '))?.slice(4);
          const data = lines.filter((line) => line.startsWith('data: ')).map((line) => line.slice(6)).join('\n');
          return { ...(id === undefined ? {} : { id }), data: JSON.parse(data) };
        }
        const { value, done } = await reader.read();
        if (done) return undefined;
        buffer += decoder.decode(value, { stream: true });
      }
    },
    cancel: () => reader.cancel(),
  };
}
