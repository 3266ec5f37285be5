// When a registry below the root rebuilds its own OpenID Federation chain (docs/federation.md "One
// chain"), and what a request waits for: a chain held for the key it signs with is served while the
// next is built in the background (a slow superior never delays a parent's federation token); one is
// built as the registry starts; a rotation ends a failure's backoff; the configuration never outlives
// its signing key; and a token by the parent's newly rotated key has the chain rebuilt at once. The
// root stands behind a loopback proxy on its public address, which delays or refuses what the test
// says. Real registries on each backend.
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import type { Clock } from '../../../../src/core/clock.ts';
import { issueFederationToken } from '../../../../src/registry/federation/federation-token.ts';
import { superiorInChain } from '../../../../src/registry/federation/oidf/superior-in-chain.ts';
import { eventually } from '../../../helpers/eventually.ts';
import { delegate, refreshAfterRevocation, registrationBody, startRegistry, type RunningRegistry } from '../../../helpers/federation.ts';
import { startFrontProxy } from '../../../helpers/front-proxy.ts';
import { BACKENDS, writeHeaders } from '../../../helpers/registry.ts';

const MINUTE = 60_000;

/** A clock the test moves forward, shared by the registries. */
function movableClock() {
  let offset = 0;
  return { now: () => new Date(Date.now() + offset), advance: (ms: number) => (offset += ms) };
}

/**
 * A root reached only through `proxy` (its public address and entity identifier) and a sovereign below
 * it, registered there (OIDF only, unless `grant`: then it also holds a Ward grant).
 */
async function rootAndSovereign(t: TestContext, backend: (typeof BACKENDS)[number], options: { clock?: Clock; grant?: boolean; logs?: boolean } = {}) {
  const proxy = await startFrontProxy(t);
  const root = await startRegistry(t, backend, { REGISTRY_TIER: 'root', REGISTRY_NAME: 'root', REGISTRY_JURISDICTION: 'GB', REGISTRY_PUBLIC_URL: proxy.url }, options);
  proxy.target = root.baseUrl;
  root.baseUrl = proxy.url;
  const sovereign = await startRegistry(t, backend, { REGISTRY_TIER: 'sovereign', REGISTRY_NAME: 'nhs', REGISTRY_JURISDICTION: 'GB', REGISTRY_PARENT_URL: proxy.url }, options);
  if (options.grant) await delegate(root, sovereign, 'sovereign');
  else {
    const registered = await root.call({ method: 'POST', url: '/v1/registries', headers: writeHeaders(), payload: await registrationBody(sovereign, 'sovereign') });
    assert.equal(registered.status, 201, JSON.stringify(registered.body));
  }
  return { root, sovereign, proxy };
}

/** A discovery request at `registry` carrying the federation token `root` signs now with its current key. */
async function askWithRootToken(root: RunningRegistry, registry: RunningRegistry, now = new Date()) {
  const token = await issueFederationToken(root.app.ward.signer, { iss: root.id, aud: registry.id, now });
  return registry.call({ method: 'GET', url: '/v1/discover?capability=x.y', headers: { authorization: `Bearer ${token}` } });
}

const rotate = async (registry: RunningRegistry, retireAfterSeconds = 3600) => {
  const rotated = await registry.call({ method: 'POST', url: '/v1/trust/keys/rotate', headers: writeHeaders(), payload: { retire_after_seconds: retireAfterSeconds } });
  assert.equal(rotated.status, 201, JSON.stringify(rotated.body));
  return rotated.body.key_id as string;
};

/** The root's fetch endpoint refused (503), as a superior that fails. */
const refuseFetch = (proxy: Awaited<ReturnType<typeof startFrontProxy>>) => {
  proxy.intercept = (request, _body, response) => {
    if (!request.url?.startsWith('/v1/oidf/fetch')) return false;
    response.writeHead(503).end();
    return true;
  };
};

const fetchesSeen = (proxy: Awaited<ReturnType<typeof startFrontProxy>>) => proxy.seen.filter((request) => request.url.startsWith('/v1/oidf/fetch')).length;

for (const backend of BACKENDS) {
  describe(`a registry's own OIDF chain: when it is rebuilt and who waits [${backend}]`, () => {
    test('a due chain is rebuilt in the background: a slow superior delays neither the chain nor a parent token', async (t) => {
      const clock = movableClock();
      const { root, sovereign, proxy } = await rootAndSovereign(t, backend, { clock });
      const chain = await sovereign.app.ward.oidfTrustChain();
      assert.ok(chain);
      clock.advance(6 * MINUTE); // a third through the statements' life: due
      proxy.hold = true; // the root answers nothing until released: no rebuild can finish
      const fetches = fetchesSeen(proxy);
      assert.equal(await sovereign.app.ward.oidfTrustChain(), chain, 'the chain held is served');
      assert.equal((await askWithRootToken(root, sovereign, clock.now())).status, 200);
      // Both were answered while the rebuild they started waits on the root, which has answered nothing.
      await eventually(() => (proxy.held() > 0 ? true : undefined), 'the rebuild to ask the root');
      proxy.release();
      // One rebuild runs meanwhile, and its chain is served once built.
      const rebuilt = await eventually(async () => {
        const now = await sovereign.app.ward.oidfTrustChain();
        return now !== chain ? now : undefined;
      }, 'the rebuilt chain');
      assert.ok(rebuilt);
      assert.ok(decodeJwt(rebuilt[1] as string).iat! > decodeJwt(chain[1] as string).iat!, 'a statement fetched since');
      assert.equal(fetchesSeen(proxy), fetches + 1, 'one rebuild (single flight)');
    });

    test('the chain is built as the registry starts; a warm-up that failed does not hold back the first request', async (t) => {
      const { sovereign, proxy } = await rootAndSovereign(t, backend);
      // Started before the root knew it: the warm-up asked the root at once, unprompted, and failed.
      assert.ok(proxy.seen.some((request) => request.url === '/.well-known/openid-federation'), 'the superior was asked at start');
      // No backoff from it: the first request after the registration gets a chain.
      assert.ok(await sovereign.app.ward.oidfTrustChain());
    });

    test('a rotation rebuilds the chain at once, though a failed rebuild left a backoff', async (t) => {
      const clock = movableClock();
      const { root, sovereign, proxy } = await rootAndSovereign(t, backend, { clock, logs: true });
      const k1 = sovereign.app.ward.signer.kid;
      assert.ok(await sovereign.app.ward.oidfTrustChain());
      refuseFetch(proxy);
      clock.advance(6 * MINUTE);
      const fetches = fetchesSeen(proxy);
      const logged = sovereign.warnings.length;
      const held = await sovereign.app.ward.oidfTrustChain();
      assert.ok(held, 'the chain held is served while the rebuild fails');
      await eventually(() => (fetchesSeen(proxy) > fetches ? true : undefined), 'the failing rebuild');
      // The failure recorded (a 10 s backoff): the warning the round logs as it ends.
      await eventually(
        () => sovereign.warnings.slice(logged).find((warning) => warning.startsWith('building the OpenID Federation trust chain failed')),
        'the failed rebuild to be recorded',
      );
      proxy.intercept = undefined;
      const fetchesBefore = fetchesSeen(proxy);
      const k2 = await rotate(sovereign);
      assert.notEqual(k1, k2);
      const chain = await sovereign.app.ward.oidfTrustChain();
      assert.ok(chain);
      assert.notDeepEqual(chain, held, 'a chain for the new key, not the one held for the old');
      assert.ok(fetchesSeen(proxy) > fetchesBefore, 'rebuilt at once: the backoff did not hold it');
      // Its configuration is signed with the new key once the root's statement names it. The root takes
      // the key from its read of the configuration, at most once a second per child on its wall clock
      // and capped at 500 ms, which a busy machine can miss; a chain whose key is not named yet is
      // rebuilt a second on (then less often), and a later read has it.
      await eventually(
        async () => {
          const now = await sovereign.app.ward.oidfTrustChain();
          return now && decodeProtectedHeader(now[0] as string).kid === k2 ? true : undefined;
        },
        () => `a chain whose configuration the new key signs; the root's warnings: ${JSON.stringify(root.warnings)}`,
      );
    });

    test("the entity configuration expires no later than the key signing it", async (t) => {
      const { sovereign, proxy } = await rootAndSovereign(t, backend);
      assert.ok(await sovereign.app.ward.oidfTrustChain());
      const k1 = sovereign.app.ward.signer.kid;
      // The root cannot learn the new key, so the configuration stays signed with the old one, which retires in two minutes.
      refuseFetch(proxy);
      await rotate(sovereign, 120);
      const served = await sovereign.app.inject({ method: 'GET', url: '/.well-known/openid-federation' });
      assert.equal(served.statusCode, 200);
      assert.equal(decodeProtectedHeader(served.body).kid, k1);
      const notAfter = sovereign.app.ward.signer.publishedKeys().find((key) => key.kid === k1)?.not_after;
      assert.ok(notAfter);
      const exp = decodeJwt(served.body).exp as number;
      assert.ok(exp <= Date.parse(notAfter) / 1000, `exp ${new Date(exp * 1000).toISOString()} after the key's not_after ${notAfter}`);
      assert.ok(exp > Date.now() / 1000 + 60);
    });

    test("a token by the parent's newly rotated key has the chain rebuilt: accepted within seconds", async (t) => {
      // With a Ward grant held from the start, so that nothing else (a grant arriving) makes the chain due.
      const { root, sovereign } = await rootAndSovereign(t, backend, { grant: true });
      assert.equal((await askWithRootToken(root, sovereign)).status, 200);
      const rotated = await rotate(root);
      // The token has the chain rebuilt and is judged with the rebuilt chain (or, should that take over a
      // second, refused and the next one accepted). Without the token's hint the chain would not be due
      // for minutes (this clock is not moved), so acceptance inside the safety net shows the rebuild.
      await eventually(async () => ((await askWithRootToken(root, sovereign)).status === 200 ? true : undefined), 'the new key accepted', 20_000, 100);
      const superior = superiorInChain((await sovereign.app.ward.oidfTrustChain()) as string[]);
      assert.ok(superior?.jwks.keys.some((key) => key.kid === rotated));
    });

    test("while an OIDF chain is held the Ward grant's keys are not used; a revoked registry refuses its former parent", async (t) => {
      const { root, sovereign, proxy } = await rootAndSovereign(t, backend, { grant: true });
      const held = await sovereign.app.ward.oidfTrustChain();
      assert.ok(held);
      assert.equal((await askWithRootToken(root, sovereign)).status, 200);
      // The root rotates, and the sovereign's grant is renewed: the grant names the new key, the chain held does not.
      const rotated = await rotate(root);
      assert.ok(await sovereign.app.ward.parentLink.refresh());
      assert.ok(sovereign.app.ward.parentLink.parent()?.jwks.keys.some((key) => key.kid === rotated), 'the grant names the new key');
      assert.ok(!superiorInChain(held)?.jwks.keys.some((key) => key.kid === rotated));
      // The rebuild the token starts fails (the root's fetch endpoint is refused): the token is judged with the chain held.
      refuseFetch(proxy);
      assert.equal((await askWithRootToken(root, sovereign)).status, 401, 'judged by the chain held, not the grant');
      proxy.intercept = undefined;
      await eventually(async () => ((await askWithRootToken(root, sovereign)).status === 200 ? true : undefined), 'the rebuilt chain naming the key', 15_000, 250);

      // Revoked by the root: its tokens are refused from then on.
      const revoked = await root.call({ method: 'POST', url: `/v1/registries/${encodeURIComponent(sovereign.id)}/revoke`, headers: writeHeaders(), payload: { reason: 'test' } });
      assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
      assert.equal(await refreshAfterRevocation(sovereign), false);
      assert.ok(sovereign.app.ward.parentLink.revoked());
      assert.equal((await askWithRootToken(root, sovereign)).status, 401);
    });
  });
}
