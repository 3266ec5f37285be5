/**
 * An HTTP proxy on loopback in front of a registry that can alter what passes in either direction, or
 * drop an answer: for tests of what a client does with answers it should not trust.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';

export type Alter = {
  /** The request's path and body as forwarded. */
  request?: (path: string, body: string) => { path: string; body: string };
  /** The answer's body as returned, or null to drop the connection. */
  response?: (path: string, text: string) => string | null;
};

/** An HTTP proxy to `target` on loopback that can alter what passes; counts the requests per path. */
export async function alteringProxy(t: TestContext, target: string, alter: Alter = {}): Promise<{ url: string; hits: (prefix: string) => number }> {
  const seen: string[] = [];
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const asked = { path: request.url ?? '/', body: Buffer.concat(chunks).toString('utf8') };
    seen.push(asked.path);
    const sent = alter.request ? alter.request(asked.path, asked.body) : asked;
    const headers = Object.fromEntries(Object.entries(request.headers).filter(([name]) => !['host', 'content-length', 'connection'].includes(name))) as Record<string, string>;
    const upstream = await fetch(`${target}${sent.path}`, { method: request.method, headers, ...(sent.body ? { body: sent.body } : {}), redirect: 'manual' });
    const text = await upstream.text();
    const returned = alter.response ? alter.response(sent.path, text) : text;
    if (returned === null) {
      response.destroy();
      return;
    }
    response.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' }).end(returned);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    const closed = new Promise((resolve) => server.close(resolve));
    server.closeAllConnections();
    return closed;
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: (prefix) => seen.filter((path) => path.startsWith(prefix)).length };
}
