/**
 * The origin-guard proxy alone (issue 28, items 1 and 2), driven as Chromium drives it: requests in
 * absolute form and CONNECT tunnels, against loopback servers that record what reaches them. The
 * browser-level tests (origin-guard.test.ts) show Chromium sends every hop here; these pin what the
 * proxy does with each.
 */
import assert from 'node:assert/strict';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import { connect } from 'node:net';
import { describe, test, type TestContext } from 'node:test';
import { BLOCKED_HEADER, startOriginGuardProxy, type BlockedRequest } from '../../src/computer-use/origin-guard-proxy.ts';

type Seen = { url: string; headers: IncomingHttpHeaders };

async function recording(t: TestContext, answer: (url: string) => { status?: number; headers?: Record<string, string | string[]> }): Promise<{ origin: string; seen: Seen[]; connections: () => number }> {
  const seen: Seen[] = [];
  let connections = 0;
  const server: Server = createServer((incoming, response) => {
    seen.push({ url: incoming.url ?? '', headers: incoming.headers });
    const reply = answer(incoming.url ?? '');
    response.writeHead(reply.status ?? 200, reply.headers ?? {});
    response.end('ok');
  });
  server.on('connection', () => (connections += 1));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  return { origin: `http://127.0.0.1:${(server.address() as { port: number }).port}`, seen, connections: () => connections };
}

/** One request through the proxy, in the absolute form a browser uses. */
function viaProxy(proxy: string, url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: IncomingHttpHeaders }> {
  const { hostname, port } = new URL(proxy);
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: hostname, port, method: 'GET', path: url, headers: { host: new URL(url).host, ...headers } }, (answer) => {
      answer.resume();
      answer.on('end', () => resolve({ status: answer.statusCode ?? 0, headers: answer.headers }));
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

/** The first line of the proxy's answer to `CONNECT authority`. */
function tunnel(proxy: string, authority: string): Promise<string> {
  const { hostname, port } = new URL(proxy);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(`CONNECT ${authority} HTTP/1.1\r\nhost: ${authority}\r\n\r\n`));
    socket.once('data', (chunk) => {
      resolve(chunk.toString().split('\r\n')[0] ?? '');
      socket.destroy();
    });
    socket.on('error', reject);
  });
}

describe('the origin-guard proxy', () => {
  test('forwards to allowed origins, refuses others, and does not pass on a redirect off the list', async (t) => {
    const elsewhere = await recording(t, () => ({}));
    const consoleServer = await recording(t, (url) => (url === '/away' ? { status: 302, headers: { location: `${elsewhere.origin}/landed` } } : url === '/next' ? { status: 303, headers: { location: '/dashboard' } } : {}));
    const blocked: BlockedRequest[] = [];
    const proxy = await startOriginGuardProxy({ allowedOrigins: [consoleServer.origin], consoleOrigin: consoleServer.origin, persona: 'observer', personaHeader: 'x-ward-persona', onBlocked: (b) => blocked.push(b) });
    t.after(() => proxy.close());

    assert.equal((await viaProxy(proxy.server, `${consoleServer.origin}/dashboard`)).status, 200);
    assert.equal(consoleServer.seen.at(-1)?.headers['x-ward-persona'], 'observer', 'the console is told the persona');
    const inside = await viaProxy(proxy.server, `${consoleServer.origin}/next`);
    assert.equal(inside.status, 303, 'a redirect on the list is passed on');
    assert.equal(inside.headers.location, '/dashboard');

    const refused = await viaProxy(proxy.server, `${elsewhere.origin}/secret`);
    assert.equal(refused.status, 403);
    assert.equal(refused.headers[BLOCKED_HEADER], 'request');
    const redirected = await viaProxy(proxy.server, `${consoleServer.origin}/away`);
    assert.equal(redirected.status, 403, 'the redirect is replaced by a refusal');
    assert.equal(redirected.headers.location, undefined);
    assert.equal(redirected.headers[BLOCKED_HEADER], 'redirect');
    assert.equal(elsewhere.connections(), 0, 'nothing reached the other origin');
    assert.deepEqual(blocked.map((b) => [b.kind, new URL(b.url).pathname]), [['request', '/secret'], ['redirect', '/landed']]);
  });

  test("a second allowed origin gets no credential: no Authorization, no persona, none of the console's cookies", async (t) => {
    const consoleServer = await recording(t, () => ({ headers: { 'set-cookie': ['ward_console=s3cret; Path=/; HttpOnly', '_csrf=abc; Path=/'] } }));
    const other = await recording(t, () => ({}));
    const proxy = await startOriginGuardProxy({ allowedOrigins: [consoleServer.origin, other.origin], consoleOrigin: consoleServer.origin, persona: 'operator', personaHeader: 'x-ward-persona', onBlocked: () => undefined });
    t.after(() => proxy.close());

    await viaProxy(proxy.server, `${consoleServer.origin}/dashboard`);
    assert.deepEqual([...proxy.consoleCookies].sort(), ['_csrf', 'ward_console'], 'the console set them');
    // Cookies are per host, not per port: the browser would send the console's to the other port too.
    await viaProxy(proxy.server, `${other.origin}/page`, { cookie: 'ward_console=s3cret; _csrf=abc; theirs=1', authorization: 'Bearer rk_abc', 'x-ward-persona': 'operator' });
    const received = other.seen.at(-1)?.headers ?? {};
    assert.equal(received.cookie, 'theirs=1', 'only its own cookie');
    assert.equal(received.authorization, undefined);
    assert.equal(received['x-ward-persona'], undefined);
    // The console itself still gets its cookies.
    await viaProxy(proxy.server, `${consoleServer.origin}/agents`, { cookie: 'ward_console=s3cret' });
    assert.equal(consoleServer.seen.at(-1)?.headers.cookie, 'ward_console=s3cret');
  });

  test('tunnels open only to a listed host and port, and never to another port of the console host', async (t) => {
    const consoleServer = await recording(t, () => ({}));
    const other = await recording(t, () => ({}));
    const unlisted = await recording(t, () => ({}));
    const blocked: BlockedRequest[] = [];
    const proxy = await startOriginGuardProxy({ allowedOrigins: [consoleServer.origin, other.origin], consoleOrigin: consoleServer.origin, personaHeader: 'x-ward-persona', onBlocked: (b) => blocked.push(b) });
    t.after(() => proxy.close());
    const authority = (origin: string) => new URL(origin).host;

    assert.match(await tunnel(proxy.server, authority(consoleServer.origin)), /^HTTP\/1\.1 200/);
    assert.match(await tunnel(proxy.server, authority(unlisted.origin)), /^HTTP\/1\.1 403/);
    // Listed, but on the console's host: the console's cookies would ride in it unseen.
    assert.match(await tunnel(proxy.server, authority(other.origin)), /^HTTP\/1\.1 403/);
    assert.match(await tunnel(proxy.server, '169.254.169.254:80'), /^HTTP\/1\.1 403/);
    assert.equal(unlisted.connections() + other.connections(), 0);
    assert.deepEqual(blocked.map((b) => b.kind), ['tunnel', 'tunnel', 'tunnel']);
  });
});
