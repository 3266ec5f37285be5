/**
 * The registry client verifies discovery and routing answers by default (issue 18 item 2), imported
 * by the package's own name (`ward/client`, package.json `exports`), against a real registry on
 * loopback. A proxy between them alters answers, rewrites requests or hides the keys.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test, type TestContext } from 'node:test';
import { createRegistryClient, type RegistryAnswer } from 'ward/client';
import { alteringProxy as proxy } from '../helpers/altering-proxy.ts';
import { BACKENDS } from '../helpers/registry.ts';
import { registerOverHttp, startRegistries, testScope, type ListeningRegistry } from '../helpers/listening.ts';

async function registryWithAgent(t: TestContext, backend: (typeof BACKENDS)[number], env: Record<string, string> = {}) {
  const [registry] = await startRegistries(testScope(t), backend, { env });
  const agentId = await registerOverHttp((registry as ListeningRegistry).baseUrl, 'Chest pain triage');
  return { registry: registry as ListeningRegistry, agentId };
}

const refusal = (answer: RegistryAnswer) => (answer.ok ? undefined : answer.envelope.error);
const rotateKey = (baseUrl: string) => createRegistryClient({ baseUrl }).rotateSigningKey({}, { idempotencyKey: randomUUID() });

for (const backend of BACKENDS) {
  describe(`registry client: signed answers [${backend}]`, () => {
    test('discovery and routing answers verify against the keys the registry publishes, and say which key signed', async (t) => {
      const { registry, agentId } = await registryWithAgent(t, backend);
      const client = createRegistryClient({ baseUrl: registry.baseUrl });
      const keys = await client.jwks();
      assert.ok(keys.ok);
      const found = await client.discover({ capability: 'triage.assess' });
      assert.ok(found.ok, found.text);
      assert.equal(found.body.results[0]?.agent_id, agentId);
      assert.equal(found.signature?.kid, keys.body.keys[0]?.kid);
      assert.equal(found.signature?.typ, 'ward-discovery+jwt');
      assert.equal(found.signature?.iss, registry.baseUrl);
      const advice = await client.route({ target: agentId });
      assert.ok(advice.ok, advice.text);
      assert.equal(advice.body.resolved_target, agentId);
      assert.equal(advice.signature?.typ, 'ward-routing+jwt');
      assert.equal((await client.route({ capability: 'triage.assess' })).ok, true);
    });

    test('an answer altered on the way is refused with SIGNATURE_INVALID; with verification off it passes unchecked', async (t) => {
      const { registry, agentId } = await registryWithAgent(t, backend);
      const tampering = await proxy(t, registry.baseUrl, {
        response: (path, text) => (path.startsWith('/v1/discover') || path.startsWith('/v1/route') ? text.replace('mesh-a2a-jsonrpc', 'mesh-a2a-jsonrpX') : text),
      });
      const client = createRegistryClient({ baseUrl: tampering.url });
      for (const answer of [await client.discover({ capability: 'triage.assess' }), await client.route({ target: agentId })]) {
        assert.equal(answer.ok, false);
        assert.equal(answer.status, 200);
        const error = refusal(answer);
        assert.equal(error?.code, 'SIGNATURE_INVALID');
        assert.equal(error?.retryable, false);
        assert.equal(error?.details.problem, 'altered');
        assert.match(error?.message ?? '', /changed after it was signed/);
        assert.deepEqual(JSON.parse(answer.text), { error }, 'the text is the envelope, not the altered answer');
      }

      const unchecked = createRegistryClient({ baseUrl: tampering.url, verifySignatures: false });
      const passed = await unchecked.discover({ capability: 'triage.assess' });
      assert.ok(passed.ok);
      assert.equal(passed.signature, null);
      assert.match(passed.text, /mesh-a2a-jsonrpX/);
      assert.equal(tampering.hits('/.well-known/jwks.json'), 1, 'the unchecking client never reads the keys');
    });

    test('after a key rotation the client reads the keys once more for the new kid, then verifies without reading them again', async (t) => {
      const { registry, agentId } = await registryWithAgent(t, backend);
      const counting = await proxy(t, registry.baseUrl);
      const client = createRegistryClient({ baseUrl: counting.url });
      const before = await client.discover({ capability: 'triage.assess' });
      assert.ok(before.ok);
      assert.equal(counting.hits('/.well-known/jwks.json'), 1);

      const rotated = await rotateKey(registry.baseUrl);
      assert.ok(rotated.ok, rotated.text);
      assert.notEqual(rotated.body.key_id, before.signature?.kid);
      // Another client made from this one (another credential) shares its keys.
      const advice = await client.as(undefined).route({ target: agentId });
      assert.ok(advice.ok, advice.text);
      assert.equal(advice.signature?.kid, rotated.body.key_id);
      assert.equal(counting.hits('/.well-known/jwks.json'), 2, 'one read for the unknown kid');

      const after = await Promise.all([client.discover({ capability: 'triage.assess', limit: 5 }), client.route({ target: agentId })]);
      assert.deepEqual(after.map((answer) => answer.ok && answer.signature?.kid), [rotated.body.key_id, rotated.body.key_id]);
      assert.equal(counting.hits('/.well-known/jwks.json'), 2, 'the new key is held now');
    });

    test('pinned keys: nothing is fetched; a key rotated in since is refused as unknown, naming the pin', async (t) => {
      const { registry, agentId } = await registryWithAgent(t, backend);
      const counting = await proxy(t, registry.baseUrl);
      const jwks = await createRegistryClient({ baseUrl: registry.baseUrl }).jwks();
      assert.ok(jwks.ok);
      const pinned = createRegistryClient({ baseUrl: counting.url, trustedJwks: jwks.body });
      assert.equal((await pinned.discover({ capability: 'triage.assess' })).ok, true);

      assert.ok((await rotateKey(registry.baseUrl)).ok);
      const advice = await pinned.route({ target: agentId });
      assert.equal(refusal(advice)?.code, 'SIGNATURE_INVALID');
      assert.equal(refusal(advice)?.details.problem, 'key-unknown');
      assert.match(refusal(advice)?.message ?? '', /pinned \(trustedJwks\)/);
      assert.equal(counting.hits('/.well-known/jwks.json'), 0);
      assert.throws(() => createRegistryClient({ baseUrl: registry.baseUrl, trustedJwks: {} as never }), /trustedJwks must be a JWK Set/);
    });

    test("the registry's keys unreachable or not a key set: DEPENDENCY_UNAVAILABLE, retryable, never a throw", async (t) => {
      const { registry, agentId } = await registryWithAgent(t, backend);
      const hiding = await proxy(t, registry.baseUrl, { response: (path, text) => (path === '/.well-known/jwks.json' ? null : text) });
      const answer = await createRegistryClient({ baseUrl: hiding.url }).discover({ capability: 'triage.assess' });
      assert.equal(answer.ok, false);
      const error = refusal(answer);
      assert.equal(error?.code, 'DEPENDENCY_UNAVAILABLE');
      assert.equal(error?.retryable, true);
      assert.equal(error?.details.url, `${hiding.url}/.well-known/jwks.json`);
      assert.equal(error?.details.cause, 'SERVICE_UNAVAILABLE');
      assert.match(error?.message ?? '', /public keys could not be read .* not used/);
      assert.equal(hiding.hits('/.well-known/jwks.json'), 1);

      const emptied = await proxy(t, registry.baseUrl, { response: (path, text) => (path === '/.well-known/jwks.json' ? '{"keys":"none"}' : text) });
      const advice = await createRegistryClient({ baseUrl: emptied.url }).route({ target: agentId });
      assert.equal(refusal(advice)?.code, 'DEPENDENCY_UNAVAILABLE');
      assert.match(refusal(advice)?.message ?? '', /is not a JWK Set/);
    });

    test('a genuine answer to another request is refused: another capability, another target', async (t) => {
      const { registry, agentId } = await registryWithAgent(t, backend);
      const other = await registerOverHttp(registry.baseUrl, 'Other triage');
      const swapping = await proxy(t, registry.baseUrl, {
        request: (path, body) => ({ path: path.replace('capability=consent.verify', 'capability=triage.assess'), body: body.replace(agentId, other) }),
      });
      const client = createRegistryClient({ baseUrl: swapping.url });
      const found = await client.discover({ capability: 'consent.verify' });
      assert.equal(refusal(found)?.details.problem, 'other-request');
      assert.match(refusal(found)?.message ?? '', /for the capability "triage.assess", not "consent.verify"/);
      const advice = await client.route({ target_agent_id: agentId });
      assert.equal(refusal(advice)?.details.problem, 'other-request');
      assert.equal((await client.route({ target: other })).ok, true);
    });

    test('a stale answer is refused: discovery older than maxAnswerAgeSeconds, advice whose trust bundle expired', async (t) => {
      const { registry, agentId } = await registryWithAgent(t, backend);
      const later = (ms: number) => () => new Date(Date.now() + ms);
      const found = await createRegistryClient({ baseUrl: registry.baseUrl, now: later(5 * 60_000), maxAnswerAgeSeconds: 60 }).discover({ capability: 'triage.assess' });
      assert.equal(refusal(found)?.details.problem, 'stale');
      assert.equal((await createRegistryClient({ baseUrl: registry.baseUrl, now: later(5 * 60_000) }).discover({ capability: 'triage.assess' })).ok, true, 'inside the default 300 s and the skew');
      const advice = await createRegistryClient({ baseUrl: registry.baseUrl, now: later(2 * 3_600_000) }).route({ target: agentId });
      assert.equal(refusal(advice)?.details.problem, 'stale');
    });

    test('an unsigned answer (REGISTRY_SIGN_RESPONSES=false) is refused as unsigned; with verification off it is taken', async (t) => {
      const { registry, agentId } = await registryWithAgent(t, backend, { REGISTRY_SIGN_RESPONSES: 'false' });
      const answer = await createRegistryClient({ baseUrl: registry.baseUrl }).route({ target: agentId });
      assert.equal(refusal(answer)?.code, 'SIGNATURE_INVALID');
      assert.equal(refusal(answer)?.details.problem, 'unsigned');
      assert.match(refusal(answer)?.message ?? '', /REGISTRY_SIGN_RESPONSES=false/);
      assert.equal((await createRegistryClient({ baseUrl: registry.baseUrl, verifySignatures: false }).route({ target: agentId })).ok, true);
    });
  });
}
