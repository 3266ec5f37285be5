import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test, type TestContext } from 'node:test';
import { createRegistryClient } from '../../src/client/registry-client.ts';
import { startMcpTestRegistry } from '../mcp/helpers.ts';
import { refusedPort } from '../helpers/refused-port.ts';

/** A plain HTTP server standing in for something that is not a healthy registry; closed when the test ends. */
async function stubServer(
  t: TestContext,
  listener: RequestListener,
): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  const server = createServer((request, response) => {
    hits += 1;
    listener(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    const closed = new Promise((resolve) => server.close(resolve));
    server.closeAllConnections();
    return closed;
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: () => hits };
}

const ANY_KEY = `rk_${'k'.repeat(40)}`;

describe('registry client', () => {
  test('a success carries the registry body byte for byte; an error carries the registry envelope byte for byte', async (t) => {
    const registry = await startMcpTestRegistry(t);
    const bodies: string[] = [];
    const recordingFetch = (async (input: string, init: RequestInit) => {
      const response = await fetch(input, init);
      // The keys the client reads to verify the discovery answer are not among the answers compared.
      if (!input.endsWith('/.well-known/jwks.json')) bodies.push(await response.clone().text());
      return response;
    }) as typeof fetch;
    const client = createRegistryClient({
      baseUrl: registry.baseUrl,
      credential: registry.key,
      timeoutMs: 10_000,
      fetch: recordingFetch,
    });
    const found = await client.discover({ capability: 'triage.assess' });
    assert.equal(found.ok, true);
    assert.equal(found.status, 200);
    assert.equal(found.text, bodies[0]);
    const missing = await client.route({ target: 'registry://gb/agents/01JAAAAAAAAAAAAAAAAAAAAAAA' });
    assert.equal(missing.ok, false);
    assert.equal(missing.status, 404);
    assert.equal(missing.text, bodies[1]);
    assert.equal(missing.ok ? undefined : missing.envelope.error.code, 'AGENT_NOT_FOUND');
    const created = await client.registerAgent(
      {
        display_name: 'Client test',
        jurisdiction: 'GB',
        endpoints: [{ url: 'https://c.example/a2a', protocol: 'mesh-a2a-jsonrpc' }],
        capabilities: { skills: ['c.test'], protocols: ['mesh-a2a-jsonrpc'] },
        trust: { certificates: [], signatures: [], attestations: [] },
      },
      { idempotencyKey: randomUUID() },
    );
    assert.equal(created.status, 201);
  });

  test('a registry that does not answer in time gives a retryable SERVICE_UNAVAILABLE envelope', async (t) => {
    const silent = await stubServer(t, () => {});
    const client = createRegistryClient({ baseUrl: silent.url, credential: ANY_KEY, timeoutMs: 200 });
    const answer = await client.discover({ capability: 'x.y' });
    assert.equal(answer.ok, false);
    assert.equal(answer.status, null);
    const envelope = JSON.parse(answer.text);
    assert.equal(envelope.error.code, 'SERVICE_UNAVAILABLE');
    assert.equal(envelope.error.retryable, true);
    assert.deepEqual(envelope.error.details, { registry_url: silent.url, cause: 'timeout', timeout_ms: 200 });
  });

  test('a call cancelled by its caller ends at once, without waiting for the timeout', async (t) => {
    const silent = await stubServer(t, () => {});
    const client = createRegistryClient({ baseUrl: silent.url, credential: ANY_KEY, timeoutMs: 60_000 });
    const controller = new AbortController();
    const pending = client.route({ target: 'registry://gb/agents/x' }, { signal: controller.signal });
    controller.abort();
    const answer = await pending;
    assert.equal(answer.ok, false);
    assert.match(JSON.parse(answer.text).error.message, /cancelled/);
  });

  test('a redirect is not followed, so the key and the body go nowhere else', async (t) => {
    const elsewhere = await stubServer(t, (_request, response) => response.writeHead(200).end('{}'));
    const redirecting = await stubServer(t, (_request, response) =>
      response.writeHead(307, { location: `${elsewhere.url}/v1/agents` }).end(),
    );
    const client = createRegistryClient({ baseUrl: redirecting.url, credential: ANY_KEY, timeoutMs: 5000 });
    const answer = await client.registerAgent({} as never, { idempotencyKey: randomUUID() });
    assert.equal(answer.ok, false);
    assert.equal(answer.status, 307);
    assert.match(
      JSON.parse(answer.text).error.message,
      /redirect to http:\/\/127\.0\.0\.1:\d+\/v1\/agents; set REGISTRY_URL to the final address/,
    );
    assert.equal(elsewhere.hits(), 0);
  });

  test('an answer without the error envelope (a proxy page) becomes a SERVICE_UNAVAILABLE envelope naming the status', async (t) => {
    const proxy = await stubServer(t, (request, response) => {
      const status = request.url?.startsWith('/v1/route') ? 404 : 502;
      response.writeHead(status, { 'content-type': 'text/html' }).end('<html>Bad gateway</html>');
    });
    const client = createRegistryClient({ baseUrl: `${proxy.url}/`, credential: ANY_KEY, timeoutMs: 5000 });
    const gateway = await client.discover({ capability: 'x.y' });
    assert.equal(gateway.status, 502);
    assert.deepEqual(JSON.parse(gateway.text).error.details, { registry_url: proxy.url, status: 502 });
    assert.equal(JSON.parse(gateway.text).error.retryable, true);
    const notFound = await client.route({ target: 'registry://gb/agents/x' });
    assert.equal(JSON.parse(notFound.text).error.details.status, 404);
    assert.match(JSON.parse(notFound.text).error.message, /is REGISTRY_URL the registry base URL\?/);
  });

  test('nothing listening: SERVICE_UNAVAILABLE naming the network error', async () => {
    const client = createRegistryClient({
      baseUrl: `http://127.0.0.1:${await refusedPort()}`,
      credential: ANY_KEY,
      timeoutMs: 5000,
    });
    const answer = await client.metadata();
    assert.equal(answer.ok, false);
    const envelope = JSON.parse(answer.text);
    assert.equal(envelope.error.code, 'SERVICE_UNAVAILABLE');
    assert.equal(envelope.error.details.cause, 'ECONNREFUSED');
  });
});
