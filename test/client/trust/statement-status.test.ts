import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test, type TestContext } from 'node:test';
import { signStatusToken } from '../../../src/contract/delegation-statement.ts';
import { verifyTrustBundle } from '../../../src/client/trust/bundle-verifier.ts';
import { ORG_URI, SOVEREIGN_URI, buildChain, createTestSigner, type TestSigner } from '../../helpers/federation-chain.ts';
import { settles } from '../../helpers/eventually.ts';

const codes = (result: { errors: Array<{ code: string }> }) => result.errors.map((e) => e.code);

type Issuer = { uri: string; signer: Pick<TestSigner, 'sign'> };

/**
 * Status endpoints of the root (`/root`) and the sovereign (`/sov`) on one local server. The unsigned
 * fields of every answer claim "active", so only the status token can tell the verifier otherwise.
 */
async function statusServer(t: TestContext) {
  const state = {
    issuers: new Map<string, Issuer>(),
    revoked: new Map<string, string>(),
    /** Signs every token with this key instead of the issuer's. */
    forger: undefined as Pick<TestSigner, 'sign'> | undefined,
    /** Issues tokens about this subject instead of the one asked about. */
    subjectOverride: undefined as string | undefined,
    issuedAt: undefined as Date | undefined,
    hang: false,
    requests: [] as string[],
  };
  const server = createServer((request, response) => {
    state.requests.push(request.url ?? '');
    if (state.hang) return;
    const url = new URL(request.url ?? '/', 'http://localhost');
    const issuer = state.issuers.get(/^\/(\w+)\/v1\/federation\/status$/.exec(url.pathname)?.[1] ?? '');
    const sub = url.searchParams.get('sub');
    if (!issuer || !sub) {
      response.writeHead(404).end();
      return;
    }
    const revokedAt = state.revoked.get(sub) ?? null;
    const claims = { iss: issuer.uri, sub: state.subjectOverride ?? sub, status: revokedAt ? 'revoked' : 'active', revoked_at: revokedAt } as const;
    void signStatusToken(state.forger ?? issuer.signer, claims, state.issuedAt ?? new Date()).then((token) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ sub, status: 'active', revoked_at: null, reason: null, status_token: token }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  t.after(close);
  return { state, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close };
}

/** A chain whose root answers at `/root` and sovereign at `/sov` of `server`. */
async function onlineChain(t: TestContext) {
  const server = await statusServer(t);
  const now = new Date();
  const chain = await buildChain(now, { root: `${server.url}/root`, sovereign: `${server.url}/sov` });
  server.state.issuers.set('root', chain.root);
  server.state.issuers.set('sov', chain.sovereign);
  return { server, chain, now, online: { online: { timeoutMs: 2000 } } };
}

describe('delegation chain verification (online status)', () => {
  test('each issuer confirms its statement is active; offline verification asks no one', async (t) => {
    const { server, chain, now, online } = await onlineChain(t);
    const { steps, ...verdict } = await verifyTrustBundle(chain.bundle, chain.anchor, now, online);
    assert.deepEqual(verdict, { valid: true, subject: chain.bundle.subject, errors: [] });
    assert.equal(steps.at(-1)?.name, 'Online status');
    assert.deepEqual(server.state.requests.sort(), [
      `/root/v1/federation/status?sub=${encodeURIComponent(SOVEREIGN_URI)}`,
      `/sov/v1/federation/status?sub=${encodeURIComponent(ORG_URI)}`,
    ]);
    await verifyTrustBundle(chain.bundle, chain.anchor, now);
    assert.equal(server.state.requests.length, 2);
  });

  test('a revoked child fails online although its statement still verifies offline', async (t) => {
    const { server, chain, now, online } = await onlineChain(t);
    server.state.revoked.set(ORG_URI, '2026-11-22T09:00:00.000Z');
    const result = await verifyTrustBundle(chain.bundle, chain.anchor, now, online);
    assert.deepEqual(codes(result), ['STATEMENT_REVOKED']);
    assert.match(result.errors[0]?.message ?? '', /statement 1 .* revoked by registry:\/\/gb\/registries\/nhs at 2026-11-22T09:00:00.000Z/);
    assert.equal((await verifyTrustBundle(chain.bundle, chain.anchor, now)).valid, true);

    server.state.revoked.set(SOVEREIGN_URI, '2026-11-22T08:00:00.000Z');
    assert.deepEqual(codes(await verifyTrustBundle(chain.bundle, chain.anchor, now, online)), ['STATEMENT_REVOKED', 'STATEMENT_REVOKED']);
  });

  test('an unreachable issuer fails closed', async (t) => {
    const { server, chain, now, online } = await onlineChain(t);
    await server.close();
    const result = await verifyTrustBundle(chain.bundle, chain.anchor, now, online);
    assert.deepEqual(codes(result), ['STATUS_UNAVAILABLE', 'STATUS_UNAVAILABLE']);
  });

  test('an issuer that does not answer in time fails closed', async (t) => {
    const { server, chain, now } = await onlineChain(t);
    server.state.hang = true; // it never answers: only the timeout ends the wait
    const result = await settles(verifyTrustBundle(chain.bundle, chain.anchor, now, { online: { timeoutMs: 200 } }), 'the verification waits for an issuer that never answers');
    assert.deepEqual(codes(result), ['STATUS_UNAVAILABLE', 'STATUS_UNAVAILABLE']);
  });

  test('a forged, misdirected or expired status token fails closed', async (t) => {
    const { server, chain, now, online } = await onlineChain(t);
    server.state.forger = await createTestSigner('ES256', {}, chain.root.signer.kid);
    const forged = await verifyTrustBundle(chain.bundle, chain.anchor, now, online);
    assert.deepEqual(codes(forged), ['STATUS_UNAVAILABLE', 'STATUS_UNAVAILABLE']);
    assert.match(forged.errors[0]?.message ?? '', /does not verify/);

    server.state.forger = undefined;
    server.state.subjectOverride = 'registry://gb/registries/someone-else';
    assert.deepEqual(codes(await verifyTrustBundle(chain.bundle, chain.anchor, now, online)), ['STATUS_UNAVAILABLE', 'STATUS_UNAVAILABLE']);

    server.state.subjectOverride = undefined;
    server.state.issuedAt = new Date(now.getTime() - 10 * 60_000);
    const expired = await verifyTrustBundle(chain.bundle, chain.anchor, now, online);
    assert.deepEqual(codes(expired), ['STATUS_UNAVAILABLE', 'STATUS_UNAVAILABLE']);
    assert.match(expired.errors[0]?.message ?? '', /expired/);
  });

  test('without the anchor api_base_url the root cannot be asked; the injected fetch is used', async (t) => {
    const { chain, now } = await onlineChain(t);
    const asked: string[] = [];
    const counting: typeof fetch = (input, init) => {
      asked.push(String(input));
      return fetch(input, init);
    };
    const { api_base_url: _url, ...withoutUrl } = chain.anchor;
    const result = await verifyTrustBundle(chain.bundle, withoutUrl, now, { online: { fetch: counting } });
    assert.deepEqual(codes(result), ['STATUS_UNAVAILABLE']);
    assert.match(result.errors[0]?.message ?? '', /statement 0 .*no api_base_url/);
    assert.equal(asked.length, 1);
    assert.match(asked[0] ?? '', /\/sov\/v1\/federation\/status\?sub=/);
  });
});
