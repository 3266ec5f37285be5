import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test, type TestContext } from 'node:test';
import {
  ENTITY_CONFIGURATION_HEADER,
  FEDERATION_BUDGET_HEADER,
  createFederationClient,
  failureKind,
  fetchKeySet,
} from '../../src/client/federation-client.ts';
import { createGuardedFetch } from '../../src/core/net/guarded-fetch.ts';
import type { RegistryAnswer } from '../../src/client/registry-answer.ts';
import { refusedPort } from '../helpers/refused-port.ts';
import { eventually, settles } from '../helpers/eventually.ts';

/** A loopback server recording what it was asked; closed when the test ends. */
async function stubServer(t: TestContext, listener: RequestListener) {
  const asked: Array<{ url: string; headers: IncomingHttpHeaders }> = [];
  const server = createServer((request, response) => {
    asked.push({ url: request.url ?? '', headers: request.headers });
    listener(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    const closed = new Promise((resolve) => server.close(resolve));
    server.closeAllConnections();
    return closed;
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, asked };
}

const json = (status: number, body: unknown): RequestListener => (_request, response) => {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
};

const failed = (answer: RegistryAnswer) => {
  assert.equal(answer.ok, false);
  return answer as Extract<RegistryAnswer, { ok: false }>;
};

describe('federation client', () => {
  test('a grant fetch names the subject and presents the entity configuration, with no credential of its own', async (t) => {
    const parent = await stubServer(t, json(200, { sub: 'registry://gb/registries/leeds' }));
    const client = createFederationClient({ baseUrl: `${parent.url}/`, timeoutMs: 2000 });
    const answer = await client.delegationGrant('registry://gb/registries/leeds', 'a.b.c d.e.f');
    assert.equal(answer.ok, true);
    assert.equal(parent.asked[0]?.url, `/v1/federation/fetch?sub=${encodeURIComponent('registry://gb/registries/leeds')}`);
    assert.equal(parent.asked[0]?.headers[ENTITY_CONFIGURATION_HEADER], 'a.b.c d.e.f');
    assert.equal(parent.asked[0]?.headers.accept, 'application/json');
    assert.equal(parent.asked[0]?.headers.authorization, undefined);
  });

  test('federated discovery carries the federation token and the budget, which is also its deadline', async (t) => {
    const child = await stubServer(t, () => undefined);
    // A client timeout of ten minutes against a budget of 5 s: were the client timeout to end the wait,
    // the safety net (20 s) would fail the test; the machine's load cannot. The budget leaves a busy
    // machine time to deliver the request, which the child (never answering) records as it arrives.
    const client = createFederationClient({ baseUrl: child.url, timeoutMs: 600_000 });
    const asking = client.federatedDiscover({ capability: 'imaging.read', limit: 5, federated: true }, { token: 'tok', budgetMs: 5000 });
    const asked = await eventually(() => child.asked[0], 'the request to reach the child');
    const answer = failed(await settles(asking, 'the client timeout, not the budget, ends the wait'));
    assert.equal(failureKind(answer), 'timeout');
    assert.equal(asked.url, '/v1/discover?capability=imaging.read&limit=5&federated=true');
    assert.equal(asked.headers.authorization, 'Bearer tok');
    assert.equal(asked.headers[FEDERATION_BUDGET_HEADER], '5000');
  });

  test('a redirect is an error, not followed; a body over the cap is cut off', async (t) => {
    const moved = await stubServer(t, (_request, response) => response.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' }).end());
    const redirected = failed(await createFederationClient({ baseUrl: moved.url }).delegationStatus('registry://gb/registries/x'));
    assert.equal(redirected.status, null);
    assert.equal(failureKind(redirected), 'network');
    assert.equal(moved.asked.length, 1);

    const large = await stubServer(t, json(200, { padding: 'x'.repeat(4096) }));
    const capped = failed(await createFederationClient({ baseUrl: large.url, maxBytes: 1024 }).delegationStatus('registry://gb/registries/x'));
    assert.equal(capped.status, 200);
    assert.equal(failureKind(capped), 'too_large');
  });

  test('failures say why: an error envelope and a non-JSON success are answers, a refused port is the network', async (t) => {
    const refusing = await stubServer(t, json(403, { error: { code: 'REGISTRY_REVOKED', message: 'revoked', details: {}, retryable: false, retry_after_ms: null } }));
    const revoked = failed(await createFederationClient({ baseUrl: refusing.url }).delegationGrant('registry://gb/registries/x', 'a.b.c'));
    assert.equal(revoked.envelope.error.code, 'REGISTRY_REVOKED');
    assert.equal(failureKind(revoked), 'answer');

    const page = await stubServer(t, (_request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<html>'));
    assert.equal(failureKind(failed(await createFederationClient({ baseUrl: page.url }).delegationStatus('x'))), 'answer');

    const nowhere = failed(await createFederationClient({ baseUrl: `http://127.0.0.1:${await refusedPort()}` }).delegationStatus('x'));
    assert.equal(nowhere.status, null);
    assert.equal(failureKind(nowhere), 'network');
  });

  test('a key set is read at the URI exactly as given; through the guarded fetch a private address is refused', async (t) => {
    const child = await stubServer(t, json(200, { keys: [{ kty: 'OKP' }] }));
    const read = await fetchKeySet(`${child.url}/keys/`, { timeoutMs: 2000, maxBytes: 64 * 1024 });
    assert.equal(read.ok, true);
    assert.equal(child.asked[0]?.url, '/keys/');

    const guarded = failed(await fetchKeySet(`${child.url}/keys`, { fetch: createGuardedFetch({ allowPrivate: false }), timeoutMs: 2000, maxBytes: 64 * 1024 }));
    assert.equal(failureKind(guarded), 'private_address');
    assert.equal(child.asked.length, 1, 'never connected');
  });
});
