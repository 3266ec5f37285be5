import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { issueFederationToken } from '../../../src/registry/federation/federation-token.ts';
import { superiorInChain } from '../../../src/registry/federation/oidf/superior-in-chain.ts';
import { registrationBody, startRegistry, type RunningRegistry } from '../../helpers/federation.ts';
import { BACKENDS, registerAgent, writeHeaders } from '../../helpers/registry.ts';

const SKILLS = { skills: ['imaging.read'], protocols: ['mesh-a2a-jsonrpc'] };

/** Registers `child` at `parent` and nothing more: the child never fetches a Ward grant. */
async function registerOnly(parent: RunningRegistry, child: RunningRegistry, tier: 'sovereign' | 'organisational') {
  const response = await parent.call({ method: 'POST', url: '/v1/registries', headers: writeHeaders(), payload: await registrationBody(child, tier) });
  assert.equal(response.status, 201, JSON.stringify(response.body));
}

/** Root → sovereign → organisation, linked by OpenID Federation only (no registry holds a Ward grant). */
async function oidfOnly(t: Parameters<typeof startRegistry>[0], backend: Parameters<typeof startRegistry>[1]) {
  const root = await startRegistry(t, backend, { REGISTRY_TIER: 'root', REGISTRY_NAME: 'root', REGISTRY_JURISDICTION: 'GB' });
  const sovereign = await startRegistry(t, backend, { REGISTRY_TIER: 'sovereign', REGISTRY_NAME: 'nhs', REGISTRY_JURISDICTION: 'GB', REGISTRY_PARENT_URL: root.baseUrl });
  const org = await startRegistry(t, backend, { REGISTRY_TIER: 'organisational', REGISTRY_NAME: 'leeds', REGISTRY_JURISDICTION: 'GB', REGISTRY_PARENT_URL: sovereign.baseUrl });
  await registerOnly(root, sovereign, 'sovereign');
  await registerOnly(sovereign, org, 'organisational');
  for (const child of [sovereign, org]) assert.equal(child.app.ward.parentLink.parent(), undefined, 'no Ward grant is held');
  return { root, sovereign, org };
}

for (const backend of BACKENDS) {
  describe(`federation tokens through the OpenID Federation chain [${backend}]`, () => {
    test("a child checks its parent's token with the keys its own OIDF chain states for the parent, with no Ward grant", async (t) => {
      const { root, sovereign, org } = await oidfOnly(t, backend);
      const discover = (registry: RunningRegistry, token: string) =>
        registry.call({ method: 'GET', url: '/v1/discover?capability=x.y', headers: { authorization: `Bearer ${token}` } });

      const fromRoot = await issueFederationToken(root.app.ward.signer, { iss: root.id, aud: sovereign.id, now: new Date() });
      assert.equal((await discover(sovereign, fromRoot)).status, 200);
      const fromSovereign = await issueFederationToken(sovereign.app.ward.signer, { iss: sovereign.id, aud: org.id, now: new Date() });
      assert.equal((await discover(org, fromSovereign)).status, 200);

      // The organisation's chain names the sovereign: its keys are those the root's statement states.
      const chain = await org.app.ward.oidfTrustChain();
      assert.ok(chain);
      const superior = superiorInChain(chain);
      assert.equal(superior?.id, sovereign.id);
      assert.equal(superior?.entityId, sovereign.baseUrl);
      assert.deepEqual(superior?.jwks.keys.map((key) => key.kid), sovereign.app.ward.signer.jwks().keys.map((key) => key.kid));

      // Anyone else's signature, the grandparent's included, is refused, as is the right parent's URI signed by another key.
      const byRootToOrg = await issueFederationToken(root.app.ward.signer, { iss: root.id, aud: org.id, now: new Date() });
      assert.equal((await discover(org, byRootToOrg)).status, 401, 'the root is not the organisation\'s parent');
      const stranger = await startRegistry(t, backend, { REGISTRY_NAME: 'stranger' });
      const forged = await issueFederationToken(stranger.app.ward.signer, { iss: sovereign.id, aud: org.id, now: new Date() });
      assert.equal((await discover(org, forged)).status, 401);
      const otherAudience = await issueFederationToken(sovereign.app.ward.signer, { iss: sovereign.id, aud: sovereign.id, now: new Date() });
      assert.equal((await discover(org, otherAudience)).status, 401);
    });

    test('federated discovery reaches an organisation two tiers down through OIDF statements alone', async (t) => {
      const { root, sovereign, org } = await oidfOnly(t, backend);
      const atSovereign = await registerAgent(sovereign, { display_name: 'national reader', capabilities: SKILLS });
      const atOrg = await registerAgent(org, { display_name: 'org reader', capabilities: SKILLS });
      const answer = await root.call({ method: 'GET', url: '/v1/discover?capability=imaging.read&federated=true' });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      const ids = answer.body.results.map((result: { agent_id: string }) => result.agent_id);
      assert.ok(ids.includes(atSovereign.agent_id) && ids.includes(atOrg.agent_id), JSON.stringify(answer.body));
      assert.deepEqual(answer.body.federation.children, [{ registry_id: sovereign.id, status: 'ok', result_count: 2 }]);

      // Revoked at the root: the sovereign's statement is gone, and the root no longer asks it.
      const revoked = await root.call({ method: 'POST', url: `/v1/registries/${encodeURIComponent(sovereign.id)}/revoke`, headers: writeHeaders(), payload: { reason: 'test' } });
      assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
      const after = await root.call({ method: 'GET', url: '/v1/discover?capability=imaging.read&federated=true' });
      assert.deepEqual(after.body.federation.children, []);
    });
  });
}
