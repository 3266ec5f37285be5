import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { readFederationState, writeFederationState } from '../../../src/registry/federation/storage/federation-state-store.ts';
import { buildRegistry } from '../../../src/registry/app.ts';
import { ENTITY_CONFIGURATION_TYP } from '../../../src/registry/federation/child-registries.ts';
import { verifyTrustBundle } from '../../../src/client/trust/bundle-verifier.ts';
import { refreshAfterRevocation, registrationBody, rootAnchor, startRegistry, threeTiers, type RunningRegistry } from '../../helpers/federation.ts';
import { eventually } from '../../helpers/eventually.ts';
import { BACKENDS, registerAgent, writeHeaders } from '../../helpers/registry.ts';

const rotate = (registry: RunningRegistry, retireAfterSeconds: number) =>
  registry.call({ method: 'POST', url: '/v1/trust/keys/rotate', headers: writeHeaders(), payload: { retire_after_seconds: retireAfterSeconds } });

const keysAtParent = async (parent: RunningRegistry, child: RunningRegistry) =>
  (await parent.call({ method: 'GET', url: `/v1/registries/${encodeURIComponent(child.id)}` })).body.jwks.keys.map((key: { kid: string }) => key.kid).sort();

/** An entity configuration as `child` would present it, with the claims and signing keys the test chooses. */
async function entityConfiguration(child: RunningRegistry, claims: Record<string, unknown>, kids: string[]) {
  const nowMs = Date.now();
  const iat = Math.floor(nowMs / 1000);
  const payload = { iss: child.id, sub: child.id, iat, iat_ms: nowMs, exp: iat + 300, jwks: child.app.ward.signer.jwks(), ...claims };
  return (await child.app.ward.signer.signWithKeys(payload, ENTITY_CONFIGURATION_TYP, kids)).join(' ');
}

for (const backend of BACKENDS) {
  describe(`federation: keys and impostors [${backend}]`, () => {
    test('a child may not take the URI of this registry or of one above it', async (t) => {
      const { sovereign } = await threeTiers(t, backend);
      const impostor = await startRegistry(t, backend, { REGISTRY_TIER: 'organisational', REGISTRY_NAME: 'root', REGISTRY_JURISDICTION: 'GB' });
      const asRoot = await sovereign.call({ method: 'POST', url: '/v1/registries', headers: writeHeaders(), payload: await registrationBody(impostor, 'organisational') });
      assert.equal(asRoot.status, 409);
      assert.equal(asRoot.body.error.code, 'REGISTRY_CONFLICT');
      assert.equal(asRoot.body.error.details.registry_id, 'registry://gb/registries/root');
    });

    test('an emergency rotation (old key retired at once) still reaches the parent, proven by the old key', async (t) => {
      const { root, sovereign, org } = await threeTiers(t, backend);
      const agent = await registerAgent(org);
      const rotated = await rotate(org, 0);
      assert.equal(rotated.status, 201);
      assert.ok(await org.app.ward.parentLink.refresh());
      assert.deepEqual(await keysAtParent(sovereign, org), [rotated.body.key_id]);
      const bundle = (await org.call({ method: 'GET', url: `/v1/trust/bundle?subject=${encodeURIComponent(agent.agent_id)}` })).body;
      assert.equal(decodeProtectedHeader(bundle.signed_bundle).kid, rotated.body.key_id);
      assert.deepEqual((await verifyTrustBundle(bundle, await rootAnchor(root))).errors, []);
    });

    test('a replayed or stale entity configuration never rolls the keys back', async (t) => {
      const { sovereign, org } = await threeTiers(t, backend);
      const oldKid = org.app.ward.signer.kid;
      const captured = await entityConfiguration(org, {}, [oldKid]);
      const rotated = await rotate(org, 3600);
      assert.ok(await org.app.ward.parentLink.refresh());
      const afterRotation = await keysAtParent(sovereign, org);
      assert.deepEqual(afterRotation, [oldKid, rotated.body.key_id].sort());

      const fetchWith = (header: string) =>
        sovereign.call({ method: 'GET', url: `/v1/federation/fetch?sub=${encodeURIComponent(org.id)}`, headers: { 'ward-entity-configuration': header } });
      // The header captured before the rotation names only the old key: replaying it changes nothing.
      assert.equal((await fetchWith(captured)).status, 200);
      assert.deepEqual(await keysAtParent(sovereign, org), afterRotation);
      // Nor does a fresh one that tries to reopen the retired key's end, or one signed by a stranger.
      const reopened = org.app.ward.signer.jwks().keys.map((key) => ({ ...key, not_after: null }));
      await fetchWith(await entityConfiguration(org, { jwks: { keys: reopened } }, [oldKid]));
      const held = (await sovereign.call({ method: 'GET', url: `/v1/registries/${encodeURIComponent(org.id)}` })).body.jwks.keys;
      assert.ok(held.find((key: { kid: string }) => key.kid === oldKid).not_after, "the retired key's end stands");
      const stranger = await startRegistry(t, backend, { REGISTRY_NAME: 'stranger' });
      const forged = await entityConfiguration(stranger, { iss: org.id, sub: org.id, jwks: stranger.app.ward.signer.jwks() }, []);
      await fetchWith(forged);
      assert.deepEqual(await keysAtParent(sovereign, org), afterRotation);
    });

    test("another instance on the same database picks up a rotation and its parent's new grant", async (t) => {
      const { sovereign, org } = await threeTiers(t, backend);
      const twin = await buildRegistry({ config: org.app.ward.config, storage: org.storage, logger: false });
      t.after(() => twin.close());
      const rotated = await rotate(org, 3600);
      assert.ok(await org.app.ward.parentLink.refresh());
      await twin.ward.signer.reload(); // what the twin does on its own within 5 s
      // The twin serves a chain naming the key it now signs with.
      await eventually(() => {
        const last = twin.ward.trustChain().statements.at(-1) as string;
        const kids = (decodeJwt(last).jwks as { keys: Array<{ kid: string }> }).keys.map((key) => key.kid);
        return kids.includes(rotated.body.key_id) ? true : undefined;
      }, "a chain on the twin naming the twin's new key", 20_000, 200);
      assert.deepEqual(await keysAtParent(sovereign, org), [org.app.ward.signer.publishedKeys()[0]?.kid, rotated.body.key_id].sort());

      // A revocation one instance confirmed reaches the other from the stored grant.
      await sovereign.call({ method: 'POST', url: `/v1/registries/${encodeURIComponent(org.id)}/revoke`, headers: writeHeaders(), payload: { reason: 'merged' } });
      assert.equal(await refreshAfterRevocation(org), false);
      // Serving a request (trustChain) is what makes the twin re-read the stored grant every few seconds.
      await eventually(() => (twin.ward.trustChain(), twin.ward.parentLink.revoked()), 'the twin to learn of the revocation', 20_000, 250);
      assert.deepEqual(twin.ward.parentLink.revoked(), { reason: 'merged' });
      const route = await twin.inject({ method: 'POST', url: '/v1/route', payload: { target: 'registry://gb/agents/01J00000000000000000000000' } });
      assert.equal(JSON.parse(route.body).error.code, 'REGISTRY_REVOKED');
    });

    test('an unsigned "revoked" answer does not make a child drop its chain; a signed status does', async (t) => {
      const { sovereign, org } = await threeTiers(t, backend);
      // A hostile middlebox in front of the parent: it answers every fetch with an unsigned 403.
      const middlebox = createServer((request, response) => {
        if (request.url?.startsWith('/v1/federation/status')) {
          response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'revoked', status_token: 'x.y.z' }));
          return;
        }
        response.writeHead(403, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'REGISTRY_REVOKED', message: 'no', details: {}, retryable: false, retry_after_ms: null } }));
      });
      await new Promise<void>((resolve) => middlebox.listen(0, '127.0.0.1', resolve));
      t.after(() => middlebox.close());
      const middleboxUrl = `http://127.0.0.1:${(middlebox.address() as AddressInfo).port}`;
      // The instance behind it holds a good grant, as if the middlebox sat on the parent's own address.
      const good = await readFederationState<Record<string, unknown>>(org.storage.db, 'delegation');
      await writeFederationState(org.storage.db, 'delegation', { ...good, parent_url: middleboxUrl }, new Date().toISOString());
      const viaMiddlebox = await buildRegistry({
        config: { ...org.app.ward.config, REGISTRY_PARENT_URL: middleboxUrl },
        storage: org.storage,
        logger: false,
      });
      t.after(() => viaMiddlebox.close());
      assert.equal(viaMiddlebox.ward.trustChain().statements.length, 2);
      await assert.rejects(viaMiddlebox.ward.parentLink.refresh());
      assert.equal(viaMiddlebox.ward.parentLink.revoked(), undefined);
      assert.equal(viaMiddlebox.ward.trustChain().statements.length, 2, 'the chain is kept');
      const stored = await readFederationState<{ statements: string[]; revoked?: unknown }>(org.storage.db, 'delegation');
      assert.equal(stored?.statements.length, 2, 'the stored chain is untouched');
      assert.equal(stored?.revoked, undefined);
      await writeFederationState(org.storage.db, 'delegation', good, new Date().toISOString());

      // The real revocation, confirmed by the parent's signed status, is believed.
      await sovereign.call({ method: 'POST', url: `/v1/registries/${encodeURIComponent(org.id)}/revoke`, headers: writeHeaders(), payload: { reason: 'contract ended' } });
      assert.equal(await refreshAfterRevocation(org), false);
      assert.deepEqual(org.app.ward.parentLink.revoked(), { reason: 'contract ended' });
    });
  });
}
