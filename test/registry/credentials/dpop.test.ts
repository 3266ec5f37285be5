import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { describe, it, type TestContext } from 'node:test';
import { decodeJwt } from 'jose';
import { Redis } from 'ioredis';
import {
  assertDpopBound,
  createDpopNonces,
  createDpopVerifier,
  normaliseHtu,
  type DpopVerifierOptions,
} from '../../../src/registry/credentials/dpop.ts';
import { createMemoryReplayCache, createRedisReplayCache } from '../../../src/registry/credentials/replay-cache.ts';
import { dpopFixture, type ProofAlg } from './dpop-client.ts';
import { refusedWith, segment, startServer } from './fixtures.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

function memoryVerifier(options: Partial<DpopVerifierOptions> = {}) {
  return createDpopVerifier({ replayCache: createMemoryReplayCache(), ...options });
}

function redisClient(t: TestContext): Redis {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  t.after(() => redis.quit());
  return redis;
}

describe('DPoP proofs from a real client (oauth4webapi)', () => {
  for (const alg of ['ES256', 'RS256', 'EdDSA'] as ProofAlg[]) {
    it(`accepts a valid ${alg} proof and returns the thumbprint of the client key`, async (t) => {
      const dpop = await dpopFixture(t);
      const client = await dpop.newClient(alg);
      const captured = await dpop.proof(client, { method: 'POST' });
      const { jkt } = await memoryVerifier().verify(captured);
      assert.equal(jkt, client.jkt);
      assertDpopBound(decodeJwt(captured.accessToken), jkt);
    });
  }

  it('ignores the query and fragment and normalises scheme, host and default port of the URL', async (t) => {
    const dpop = await dpopFixture(t);
    const captured = await dpop.proof(await dpop.newClient(), { path: '/v1/agents?limit=5' });
    const shouted = captured.url.replace('http://127.0.0.1', 'HTTP://127.0.0.1') + '#top';
    await memoryVerifier().verify({ ...captured, url: shouted });
    assert.equal(
      normaliseHtu('HTTPS://Ward.Example:443/v1/%7eagents/./x?q=1#f'),
      'https://ward.example/v1/~agents/x',
    );
    assert.equal(normaliseHtu('ftp://ward.example/'), undefined);
  });

  it('refuses a replayed proof with the in-memory replay cache', async (t) => {
    const dpop = await dpopFixture(t);
    const captured = await dpop.proof(await dpop.newClient());
    const verifier = memoryVerifier();
    await verifier.verify(captured);
    await refusedWith(verifier.verify(captured), 'proof_replayed');
  });

  it('refuses on one instance a proof already used on another sharing Redis', async (t) => {
    const dpop = await dpopFixture(t);
    const captured = await dpop.proof(await dpop.newClient());
    const prefix = `ward:dpop:test-${randomUUID()}:`;
    const first = createDpopVerifier({ replayCache: createRedisReplayCache(redisClient(t), { prefix }) });
    const second = createDpopVerifier({ replayCache: createRedisReplayCache(redisClient(t), { prefix }) });
    await first.verify(captured);
    await refusedWith(second.verify(captured), 'proof_replayed');
    const cleaner = new Redis(REDIS_URL);
    t.after(async () => {
      const keys = await cleaner.keys(`${prefix}*`);
      if (keys.length > 0) await cleaner.del(...keys);
      await cleaner.quit();
    });
    await refusedWith(first.verify(captured), 'proof_replayed');
  });

  it('refuses every proof, as unavailable (503), while the shared replay cache cannot be reached', async (t) => {
    const dpop = await dpopFixture(t);
    const closed = await startServer(t, () => undefined);
    await closed.close();
    const redis = new Redis(closed.baseUrl.replace('http', 'redis'), {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    redis.on('error', () => undefined);
    t.after(() => redis.disconnect());
    const verifier = createDpopVerifier({ replayCache: createRedisReplayCache(redis) });
    const failure = await refusedWith(
      verifier.verify(await dpop.proof(await dpop.newClient())),
      'unavailable',
    );
    assert.equal(failure.status, 503);
  });

  it('refuses a proof made for another method', async (t) => {
    const dpop = await dpopFixture(t);
    const captured = await dpop.proof(await dpop.newClient(), { method: 'GET' });
    await refusedWith(memoryVerifier().verify({ ...captured, method: 'DELETE' }), 'proof_wrong_method');
  });

  it('refuses a proof made for another path or another origin', async (t) => {
    const dpop = await dpopFixture(t);
    const captured = await dpop.proof(await dpop.newClient(), { path: '/v1/agents' });
    await refusedWith(
      memoryVerifier().verify({
        ...captured,
        url: captured.url.replace('/v1/agents', '/v1/admin/billing/api-keys'),
      }),
      'proof_wrong_url',
    );
    await refusedWith(
      memoryVerifier().verify({ ...captured, url: 'https://registry.ward.test/v1/agents' }),
      'proof_wrong_url',
    );
  });

  it('refuses a proof from a client clock five minutes behind or ahead', async (t) => {
    const dpop = await dpopFixture(t);
    const client = await dpop.newClient();
    const stale = await refusedWith(
      memoryVerifier().verify(await dpop.proof(client, { clockSkewSec: -300 })),
      'proof_stale',
    );
    assert.match(stale.message, /too long ago/);
    const future = await refusedWith(
      memoryVerifier().verify(await dpop.proof(client, { clockSkewSec: 300 })),
      'proof_stale',
    );
    assert.match(future.message, /future/);
  });

  it('accepts iat up to the window either side of the verifier clock and refuses it beyond', async (t) => {
    const dpop = await dpopFixture(t);
    const client = await dpop.newClient();
    const at = (offsetSec: number) => async () => {
      const captured = await dpop.proof(client);
      const iat = decodeJwt(captured.proof).iat as number;
      return memoryVerifier({ now: () => new Date((iat + offsetSec) * 1000) }).verify(captured);
    };
    await at(60)();
    await at(-60)();
    await refusedWith(at(61)(), 'proof_stale');
    await refusedWith(at(-61)(), 'proof_stale');
  });

  it('refuses a proof without ath, and one made for another access token', async (t) => {
    const dpop = await dpopFixture(t);
    const client = await dpop.newClient();
    const withoutAth = await dpop.proof(client, { modify: (_header, payload) => delete payload.ath });
    await refusedWith(memoryVerifier().verify(withoutAth), 'proof_wrong_ath');
    const captured = await dpop.proof(client);
    const other = await dpop.newClient();
    await refusedWith(
      memoryVerifier().verify({ ...captured, accessToken: other.accessToken }),
      'proof_wrong_ath',
    );
  });

  it('refuses a token bound to another key than the one that signed the proof', async (t) => {
    const dpop = await dpopFixture(t);
    const client = await dpop.newClient();
    const other = await dpop.newClient();
    // The token of `other` presented with a valid proof by `client`: the proof is fine, the binding is not.
    const captured = await dpop.proof(client, { accessToken: other.accessToken });
    const { jkt } = await memoryVerifier().verify(captured);
    const failure = await refusedWith(
      Promise.resolve().then(() => assertDpopBound(decodeJwt(captured.accessToken), jkt)),
      'binding_mismatch',
    );
    assert.equal(failure.scheme, 'DPoP');
    await refusedWith(
      Promise.resolve().then(() => assertDpopBound({ sub: 'unbound' }, jkt)),
      'binding_mismatch',
    );
  });

  it('refuses a proof whose jwk header carries the private key', async (t) => {
    const dpop = await dpopFixture(t);
    const client = await dpop.newClient();
    const privateJwk = await crypto.subtle.exportKey('jwk', client.keyPair.privateKey);
    const captured = await dpop.proof(client, { modify: (header) => (header.jwk = privateJwk) });
    const failure = await refusedWith(memoryVerifier().verify(captured), 'proof_invalid');
    assert.match(failure.message, /public key only/);
  });

  it('refuses a proof without jti or without htu', async (t) => {
    const dpop = await dpopFixture(t);
    const client = await dpop.newClient();
    await refusedWith(
      memoryVerifier().verify(await dpop.proof(client, { modify: (_header, payload) => delete payload.jti })),
      'proof_invalid',
    );
    await refusedWith(
      memoryVerifier().verify(await dpop.proof(client, { modify: (_header, payload) => delete payload.htu })),
      'proof_invalid',
    );
  });

  it('refuses a proof whose typ is not dpop+jwt', async (t) => {
    const dpop = await dpopFixture(t);
    const captured = await dpop.proof(await dpop.newClient(), { modify: (header) => (header.typ = 'JWT') });
    assert.match((await refusedWith(memoryVerifier().verify(captured), 'proof_invalid')).message, /typ/);
  });

  it('refuses an unsecured proof (alg none), signed or not', async (t) => {
    const dpop = await dpopFixture(t);
    const client = await dpop.newClient();
    const relabelled = await dpop.proof(client, { modify: (header) => (header.alg = 'none') });
    await refusedWith(memoryVerifier().verify(relabelled), 'proof_invalid');
    const real = await dpop.proof(client);
    const [header, payload] = real.proof.split('.');
    const unsecured = `${segment({ ...JSON.parse(Buffer.from(header ?? '', 'base64url').toString()), alg: 'none' })}.${payload}.`;
    const failure = await refusedWith(
      memoryVerifier().verify({ ...real, proof: unsecured }),
      'proof_invalid',
    );
    assert.match(failure.message, /ES256, EdDSA, RS256/);
  });

  it('refuses an algorithm outside the allowed list (Ed25519 as oauth4webapi labels it by default)', async (t) => {
    const dpop = await dpopFixture(t);
    const captured = await dpop.proof(await dpop.newClient('EdDSA'), { keepEd25519Alg: true });
    await refusedWith(memoryVerifier().verify(captured), 'proof_invalid');
    await memoryVerifier({ algorithms: ['Ed25519'] }).verify(captured);
  });

  it('refuses a proof whose claims were changed after signing', async (t) => {
    const dpop = await dpopFixture(t);
    const captured = await dpop.proof(await dpop.newClient(), { method: 'GET' });
    const [header, payload, signature] = captured.proof.split('.');
    const claims = JSON.parse(Buffer.from(payload ?? '', 'base64url').toString());
    const forged = `${header}.${segment({ ...claims, htm: 'DELETE' })}.${signature}`;
    await refusedWith(
      memoryVerifier().verify({ ...captured, proof: forged, method: 'DELETE' }),
      'proof_invalid',
    );
  });

  it('refuses symmetric algorithms as configuration', () => {
    assert.throws(() => memoryVerifier({ algorithms: ['HS256'] }), /HS256/);
  });
});

describe('DPoP server nonces', () => {
  const at = new Date('2026-03-01T12:02:00.000Z');
  const later = (minutes: number) => new Date(at.getTime() + minutes * 60_000);

  it("accepts the current nonce and the previous window's; not an older one, a forged one or another secret's", () => {
    const nonces = createDpopNonces('a-shared-secret-of-at-least-32-bytes!!');
    const issued = nonces.current(at);
    assert.match(issued, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(nonces.accepts(issued, at), true);
    assert.equal(nonces.accepts(issued, later(5)), true, 'still good in the next window');
    assert.equal(nonces.accepts(issued, later(11)), false, 'two windows on: stale');
    assert.equal(nonces.accepts(`${issued.slice(0, -1)}${issued.endsWith('A') ? 'B' : 'A'}`, at), false, 'altered');
    assert.equal(nonces.accepts('', at), false);
    assert.equal(createDpopNonces('another-secret-entirely-of-32-bytes!!!').accepts(issued, at), false, 'instances agree only with the same secret');
    assert.equal(createDpopNonces('a-shared-secret-of-at-least-32-bytes!!').current(at), issued, 'another instance computes the same nonce');
  });
});

