import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';

/**
 * A plain HTTP proxy on loopback in front of one registry: what stands on that registry's public
 * address (its REGISTRY_PUBLIC_URL). It forwards every request unchanged, except that it drops the
 * headers named in `strip` and lets `intercept` answer a request itself (a hostile middlebox, or an
 * endpoint switched off). It records what passed.
 */
export type FrontProxy = {
  url: string;
  /** Where requests go (the registry's listen address), set once it listens. */
  target: string | undefined;
  strip: string[];
  /** Answers the request itself when it returns true. */
  intercept: ((request: IncomingMessage, body: string, response: ServerResponse) => boolean) | undefined;
  /** Every request: method, path and whether a stripped header was dropped from it. */
  seen: Array<{ method: string; url: string; stripped: boolean }>;
  /** While true, each request is held, not forwarded, until `release()` (a registry that has not answered yet). */
  hold: boolean;
  /** How many requests are held now. */
  held(): number;
  /** Forwards the requests held, and holds no more. */
  release(): void;
};

export async function startFrontProxy(t: Pick<TestContext, 'after'>): Promise<FrontProxy> {
  const waiting: (() => void)[] = [];
  const proxy: FrontProxy = {
    url: '',
    target: undefined,
    strip: [],
    intercept: undefined,
    seen: [],
    hold: false,
    held: () => waiting.length,
    release: () => {
      proxy.hold = false;
      for (const forward of waiting.splice(0)) forward();
    },
  };
  const server = createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const body = Buffer.concat(chunks);
      const headers = { ...incoming.headers };
      const stripped = proxy.strip.some((name) => headers[name] !== undefined);
      for (const name of proxy.strip) delete headers[name];
      proxy.seen.push({ method: incoming.method ?? 'GET', url: incoming.url ?? '/', stripped });
      if (proxy.intercept?.(incoming, body.toString('utf8'), response)) return;
      const target = proxy.target;
      if (!target) {
        response.writeHead(502).end();
        return;
      }
      const forward = () => {
        const upstream = request(new URL(incoming.url ?? '/', target), { method: incoming.method, headers }, (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
        });
        upstream.on('error', () => response.writeHead(502).end());
        upstream.end(body);
      };
      if (proxy.hold) waiting.push(forward);
      else forward();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(async () => {
    waiting.splice(0);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}
