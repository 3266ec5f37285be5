import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { verifyTrustBundle } from '../../../src/client/trust/bundle-verifier.ts';
import { delegate, refreshAfterRevocation, registrationBody, rootAnchor, startRegistry, threeTiers, type RunningRegistry } from '../../helpers/federation.ts';
import { BACKENDS, registerAgent, writeHeaders } from '../../helpers/registry.ts';
import { eventually } from '../../helpers/eventually.ts';

const codes = (result: { errors: Array<{ code: string }> }) => [...new Set(result.errors.map((e) => e.code))].sort();

async function bundleOf(registry: RunningRegistry, subject: string) {
  const response = await registry.call({ method: 'GET', url: `/v1/trust/bundle?subject=${encodeURIComponent(subject)}` });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body;
}

async function register(parent: RunningRegistry, payload: Record<string, unknown>) {
  return parent.call({ method: 'POST', url: '/v1/registries', headers: writeHeaders(), payload });
}

for (const backend of BACKENDS) {
  describe(`federation [${backend}]`, () => {
    test('an agent of an organisational registry verifies back to the root with only the root anchor', async (t) => {
      const { root, sovereign, org } = await threeTiers(t, backend);
      const agent = await registerAgent(org, { capabilities: { skills: ['triage.assess'], protocols: ['mesh-a2a-jsonrpc'] } });
      const bundle = await bundleOf(org, agent.agent_id);
      assert.deepEqual(bundle.delegation_chain, [root.id, sovereign.id, org.id]);
      assert.equal(bundle.statements.length, 2);
      const [toSovereign, toOrg] = bundle.statements.map((s: string) => ({ header: decodeProtectedHeader(s), claims: decodeJwt(s) }));
      assert.equal(toSovereign.header.typ, 'ward-delegation+jwt');
      assert.deepEqual([toSovereign.claims.iss, toSovereign.claims.sub, toSovereign.claims.tier], [root.id, sovereign.id, 'sovereign']);
      assert.deepEqual(toSovereign.claims.constraints, { max_path_length: 1, allowed_jurisdictions: ['GB'] });
      assert.deepEqual([toOrg.claims.iss, toOrg.claims.sub, toOrg.claims.tier], [sovereign.id, org.id, 'organisational']);
      assert.deepEqual(toOrg.claims.constraints, { max_path_length: 0, allowed_jurisdictions: ['GB'] });
      assert.equal((toOrg.claims.exp as number) - (toOrg.claims.iat as number), 900, 'statements are short-lived');

      const anchor = await rootAnchor(root);
      const verified = await verifyTrustBundle(bundle, anchor);
      assert.deepEqual(verified.errors, []);
      assert.equal(verified.valid, true);
      assert.equal((await verifyTrustBundle(bundle, anchor, new Date(), { online: {} })).valid, true, 'online: every statement is active');

      // Routing evidence names the same chain.
      const routed = await org.call({ method: 'POST', url: '/v1/route', payload: { target: agent.agent_id } });
      assert.deepEqual(routed.body.evidence.delegation_chain, [root.id, sovereign.id, org.id]);
      assert.equal((await verifyTrustBundle(routed.body.trust_bundle, anchor)).valid, true);

      // Another root's anchor verifies nothing.
      const stranger = await startRegistry(t, backend, { REGISTRY_NAME: 'stranger' });
      assert.equal((await verifyTrustBundle(bundle, await rootAnchor(stranger))).valid, false);
    });

    test('the tier rules: one sovereign per country, organisational registries of the own country only, none below them', async (t) => {
      const { root, sovereign, org } = await threeTiers(t, backend);
      const other = await startRegistry(t, backend, { REGISTRY_TIER: 'sovereign', REGISTRY_NAME: 'nhs2', REGISTRY_JURISDICTION: 'GB' });
      const second = await register(root, await registrationBody(other, 'sovereign'));
      assert.equal(second.status, 409);
      assert.equal(second.body.error.code, 'REGISTRY_CONFLICT');
      assert.equal(second.body.error.details.registry_id, sovereign.id);

      const again = await register(root, await registrationBody(sovereign, 'sovereign'));
      assert.equal(again.body.error.code, 'REGISTRY_CONFLICT');

      const orgAtRoot = await register(root, await registrationBody(other, 'organisational'));
      assert.equal(orgAtRoot.status, 422);
      assert.equal(orgAtRoot.body.error.code, 'TIER_VIOLATION');

      const french = await startRegistry(t, backend, { REGISTRY_TIER: 'organisational', REGISTRY_NAME: 'aphp', REGISTRY_JURISDICTION: 'FR' });
      const foreign = await register(sovereign, await registrationBody(french, 'organisational'));
      assert.equal(foreign.status, 422);
      assert.equal(foreign.body.error.code, 'TIER_VIOLATION');
      assert.equal(foreign.body.error.details.jurisdiction, 'FR');

      const sovereignAtSovereign = await register(sovereign, await registrationBody(other, 'sovereign'));
      assert.equal(sovereignAtSovereign.body.error.code, 'TIER_VIOLATION');

      const belowOrg = await register(org, await registrationBody(other, 'organisational'));
      assert.equal(belowOrg.status, 422);
      assert.equal(belowOrg.body.error.code, 'TIER_VIOLATION');

      const listed = await root.call({ method: 'GET', url: '/v1/registries?tier=sovereign&jurisdiction=gb' });
      assert.deepEqual(listed.body.registries.map((r: { registry_id: string }) => r.registry_id), [sovereign.id]);
      assert.deepEqual(listed.body.registries[0].delegation_chain, [root.id, sovereign.id]);
      const none = await root.call({ method: 'GET', url: '/v1/registries?tier=organisational' });
      assert.deepEqual(none.body.registries, []);
      const one = await sovereign.call({ method: 'GET', url: `/v1/registries/${encodeURIComponent(org.id)}` });
      assert.equal(one.status, 200);
      assert.equal(one.body.tier, 'organisational');
      assert.equal(one.body.api_base_url, org.baseUrl);
      const missing = await sovereign.call({ method: 'GET', url: `/v1/registries/${encodeURIComponent('registry://gb/registries/nobody')}` });
      assert.equal(missing.status, 404);
      assert.equal(missing.body.error.code, 'REGISTRY_NOT_FOUND');
    });

    test('registration refuses bad anchors, unknown fields and missing idempotency keys, storing nothing', async (t) => {
      const root = await startRegistry(t, backend, { REGISTRY_NAME: 'root' });
      const child = await startRegistry(t, backend, { REGISTRY_TIER: 'sovereign', REGISTRY_NAME: 'nhs' });
      const body = await registrationBody(child, 'sovereign');
      const wrongThumbprint = await register(root, { ...body, trust_anchors: [{ ...body.trust_anchors[0], thumbprint_sha256: 'A'.repeat(43) }] });
      assert.equal(wrongThumbprint.status, 422);
      assert.equal(wrongThumbprint.body.error.details.errors[0].pointer, '/trust_anchors/0/thumbprint_sha256');
      const privateKey = await register(root, { ...body, jwks: { keys: [{ kty: 'oct', k: 'c2VjcmV0' }] } });
      assert.equal(privateKey.status, 422);
      const unreachable = await register(root, { ...body, trust_anchors: [{ ...body.trust_anchors[0], jwks_uri: 'http://127.0.0.1:1/.well-known/jwks.json' }] });
      assert.equal(unreachable.status, 503);
      assert.equal(unreachable.body.error.code, 'DEPENDENCY_UNAVAILABLE');
      const rootTier = await register(root, { ...body, tier: 'root' });
      assert.equal(rootTier.status, 422);
      assert.equal(rootTier.body.error.code, 'VALIDATION_ERROR');
      const extra = await register(root, { ...body, owner: 'me' });
      assert.equal(extra.status, 422);
      const noKey = await root.call({ method: 'POST', url: '/v1/registries', payload: body });
      assert.equal(noKey.status, 400);
      assert.equal(noKey.body.error.code, 'IDEMPOTENCY_KEY_REQUIRED');
      assert.deepEqual((await root.call({ method: 'GET', url: '/v1/registries' })).body.registries, []);

      // The same request replayed under its key registers once.
      const headers = writeHeaders();
      const first = await root.call({ method: 'POST', url: '/v1/registries', headers, payload: body });
      assert.equal(first.status, 201);
      const replay = await root.call({ method: 'POST', url: '/v1/registries', headers, payload: body });
      assert.equal(replay.status, 200);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal((await root.call({ method: 'GET', url: '/v1/registries' })).body.registries.length, 1);
    });

    test('bad input on the federation routes: unknown registries, bad filters and cursors, bad rotation bodies', async (t) => {
      const { root, sovereign } = await threeTiers(t, backend);
      const unknown = encodeURIComponent('registry://gb/registries/nobody');
      const revokeUnknown = await root.call({ method: 'POST', url: `/v1/registries/${unknown}/revoke`, headers: writeHeaders(), payload: { reason: 'x' } });
      assert.equal(revokeUnknown.status, 404);
      assert.equal(revokeUnknown.body.error.code, 'REGISTRY_NOT_FOUND');
      const revokeNoKey = await root.call({ method: 'POST', url: `/v1/registries/${encodeURIComponent(sovereign.id)}/revoke`, payload: { reason: 'x' } });
      assert.equal(revokeNoKey.body.error.code, 'IDEMPOTENCY_KEY_REQUIRED');
      for (const url of [`/v1/federation/fetch?sub=${unknown}`, `/v1/federation/status?sub=${unknown}`]) {
        const answer = await root.call({ method: 'GET', url });
        assert.equal(answer.status, 404, url);
        assert.equal(answer.body.error.code, 'REGISTRY_NOT_FOUND');
      }
      assert.equal((await root.call({ method: 'GET', url: '/v1/federation/fetch' })).status, 422, 'sub is required');
      const badJurisdiction = await root.call({ method: 'GET', url: '/v1/registries?jurisdiction=XX' });
      assert.equal(badJurisdiction.status, 422);
      assert.equal(badJurisdiction.body.error.details.errors[0].pointer, '/jurisdiction');
      assert.equal((await root.call({ method: 'GET', url: '/v1/registries?tier=global' })).status, 422);
      assert.equal((await root.call({ method: 'GET', url: '/v1/registries?cursor=not-a-cursor' })).status, 422);
      const page = await root.call({ method: 'GET', url: '/v1/registries?limit=1' });
      assert.equal(page.body.next_cursor, null, 'one child, one page');

      for (const payload of [{ retire_after_seconds: -1 }, { retire_after_seconds: 31 * 86_400 }, { alg: 'HS256' }, { retire_after_seconds: '60' }, { extra: true }]) {
        const rotated = await root.call({ method: 'POST', url: '/v1/trust/keys/rotate', headers: writeHeaders(), payload });
        assert.equal(rotated.status, 422, JSON.stringify(payload));
        assert.equal(rotated.body.error.code, 'VALIDATION_ERROR');
      }
      assert.equal((await root.call({ method: 'GET', url: '/v1/trust/anchors' })).body.anchors.length, 1, 'no refused rotation changed the keys');
      // The same rotation replayed under its key rotates once.
      const headers = writeHeaders();
      const first = await root.call({ method: 'POST', url: '/v1/trust/keys/rotate', headers, payload: {} });
      const replay = await root.call({ method: 'POST', url: '/v1/trust/keys/rotate', headers, payload: {} });
      assert.equal(replay.status, 200);
      assert.deepEqual(replay.body, first.body);
      assert.equal((await root.call({ method: 'GET', url: '/v1/trust/anchors' })).body.anchors.length, 2);
    });

    test('revoking a child: an event, a signed revoked status, no new statements, out of federated discovery, chain fails online', async (t) => {
      const { root, sovereign, org } = await threeTiers(t, backend);
      const agent = await registerAgent(org);
      const before = await bundleOf(org, agent.agent_id);
      const anchor = await rootAnchor(root);

      const missingReason = await sovereign.call({ method: 'POST', url: `/v1/registries/${encodeURIComponent(org.id)}/revoke`, headers: writeHeaders(), payload: {} });
      assert.equal(missingReason.status, 422);
      const revoked = await sovereign.call({ method: 'POST', url: `/v1/registries/${encodeURIComponent(org.id)}/revoke`, headers: writeHeaders(), payload: { reason: 'contract ended' } });
      assert.equal(revoked.status, 200);
      assert.equal(revoked.body.status, 'revoked');
      assert.equal(revoked.body.revocation_reason, 'contract ended');
      const twice = await sovereign.call({ method: 'POST', url: `/v1/registries/${encodeURIComponent(org.id)}/revoke`, headers: writeHeaders(), payload: { reason: 'again' } });
      assert.equal(twice.status, 409);

      const status = await sovereign.call({ method: 'GET', url: `/v1/federation/status?sub=${encodeURIComponent(org.id)}` });
      assert.equal(status.body.status, 'revoked');
      assert.deepEqual(decodeJwt(status.body.status_token).status, 'revoked');
      const fetch = await sovereign.call({ method: 'GET', url: `/v1/federation/fetch?sub=${encodeURIComponent(org.id)}` });
      assert.equal(fetch.status, 403);
      assert.equal(fetch.body.error.code, 'REGISTRY_REVOKED');

      // Online verification of a bundle issued before the revocation fails at once…
      const online = await verifyTrustBundle(before, anchor, new Date(), { online: {} });
      assert.equal(online.valid, false);
      assert.ok(codes(online).includes('STATEMENT_REVOKED'), JSON.stringify(online.errors));
      // …offline it lapses with its statement, and the child itself loses its statements on its next fetch.
      const lapsed = await verifyTrustBundle(before, anchor, new Date(Date.now() + 16 * 60_000));
      assert.equal(lapsed.valid, false);
      // The child learns of it at its next fetch, and then gives no routing advice and no bundles.
      assert.equal(await refreshAfterRevocation(org), false);
      assert.deepEqual(org.app.ward.trustChain().statements, []);
      const route = await org.call({ method: 'POST', url: '/v1/route', payload: { target: agent.agent_id } });
      assert.equal(route.status, 403);
      assert.equal(route.body.error.code, 'REGISTRY_REVOKED');
      assert.equal(route.body.error.details.reason, 'contract ended');
      const bundle = await org.call({ method: 'GET', url: `/v1/trust/bundle?subject=${encodeURIComponent(agent.agent_id)}` });
      assert.equal(bundle.body.error.code, 'REGISTRY_REVOKED');
      // Discovery at the child still answers: it makes no claim about the federation.
      assert.equal((await org.call({ method: 'GET', url: '/v1/discover?capability=triage.assess' })).status, 200);
    });

    test('key rotation: the new key signs, the old stays published until its not_after, and old signatures still verify', async (t) => {
      const { root, sovereign, org } = await threeTiers(t, backend);
      const agent = await registerAgent(org);
      const before = await bundleOf(org, agent.agent_id);
      const oldKid = (await root.call({ method: 'GET', url: '/v1/trust/anchors' })).body.anchors[0].key_id;

      const noKey = await root.call({ method: 'POST', url: '/v1/trust/keys/rotate', payload: {} });
      assert.equal(noKey.body.error.code, 'IDEMPOTENCY_KEY_REQUIRED');
      const rotated = await root.call({ method: 'POST', url: '/v1/trust/keys/rotate', headers: writeHeaders(), payload: { retire_after_seconds: 120 } });
      assert.equal(rotated.status, 201);
      assert.equal(rotated.body.previous.key_id, oldKid);
      assert.notEqual(rotated.body.key_id, oldKid);
      const anchors = (await root.call({ method: 'GET', url: '/v1/trust/anchors' })).body.anchors;
      assert.deepEqual(anchors.map((a: { key_id: string }) => a.key_id), [oldKid, rotated.body.key_id]);
      assert.equal(anchors[0].not_after, rotated.body.previous.not_after);
      assert.equal(anchors[1].not_after, rotated.body.not_after);
      assert.ok(Date.parse(rotated.body.not_after) > Date.now() + 300 * 86_400_000, 'a new key is valid for a year by default');
      for (const a of anchors) assert.equal(a.role, 'root');

      const anchor = await rootAnchor(root);
      assert.equal((await verifyTrustBundle(before, anchor)).valid, true, 'signed before the rotation, still verifies');
      assert.ok(await sovereign.app.ward.parentLink.refresh());
      await org.app.ward.parentLink.refresh();
      // The organisation's OIDF chain, still valid, is served while it is rebuilt in the background (the
      // grant changed): bundles carry the chain up to the root's new key once that rebuild is in.
      await eventually(async () => {
        const chain = await org.app.ward.oidfTrustChain();
        return chain && decodeProtectedHeader(chain.at(-1) as string).kid === rotated.body.key_id ? true : undefined;
      }, "the organisation's chain up to the root's new key");
      const after = await bundleOf(org, agent.agent_id);
      assert.equal(decodeProtectedHeader(after.statements[0]).kid, rotated.body.key_id, 'the new key signs from now on');
      assert.equal((await verifyTrustBundle(after, anchor)).valid, true);
      // After the old key's not_after the old statement no longer verifies.
      const late = new Date(Date.parse(rotated.body.previous.not_after) + 2 * 60_000); // past the verifier's 60 s skew
      assert.deepEqual(codes(await verifyTrustBundle(before, anchor, late)), ['KEY_EXPIRED']);
      assert.equal((await verifyTrustBundle(after, anchor, late)).valid, true, 'what the new key signed is unaffected');

      // A child rotates: its parent learns the new key from an entity configuration signed by the old one.
      const orgRotated = await org.call({ method: 'POST', url: '/v1/trust/keys/rotate', headers: writeHeaders(), payload: {} });
      assert.equal(orgRotated.status, 201);
      assert.ok(await org.app.ward.parentLink.refresh());
      const known = await sovereign.call({ method: 'GET', url: `/v1/registries/${encodeURIComponent(org.id)}` });
      assert.deepEqual(known.body.jwks.keys.map((k: { kid: string }) => k.kid).sort(), [orgRotated.body.previous.key_id, orgRotated.body.key_id].sort());
      const signedByNewKey = await bundleOf(org, agent.agent_id);
      assert.equal(decodeProtectedHeader(signedByNewKey.signed_bundle).kid, orgRotated.body.key_id);
      assert.equal((await verifyTrustBundle(signedByNewKey, await rootAnchor(root))).valid, true);
    });

    test('federated discovery reaches agents two tiers down, survives a child being down, and is refused where it does not apply', async (t) => {
      const { root, sovereign, org } = await threeTiers(t, backend);
      const skills = { skills: ['imaging.read'], protocols: ['mesh-a2a-jsonrpc'] };
      const atOrg = await registerAgent(org, { display_name: 'org reader', capabilities: skills });
      const atSovereign = await registerAgent(sovereign, { display_name: 'national reader', capabilities: skills });
      const atRoot = await registerAgent(root, { display_name: 'root reader', capabilities: skills });

      const local = await root.call({ method: 'GET', url: '/v1/discover?capability=imaging.read' });
      assert.deepEqual(local.body.results.map((r: { agent_id: string }) => r.agent_id), [atRoot.agent_id]);

      const federated = await root.call({ method: 'GET', url: '/v1/discover?capability=imaging.read&federated=true' });
      assert.equal(federated.status, 200, JSON.stringify(federated.body));
      const byId = new Map(federated.body.results.map((r: { agent_id: string; registry_id: string }) => [r.agent_id, r.registry_id]));
      assert.equal(byId.get(atRoot.agent_id), root.id);
      assert.equal(byId.get(atSovereign.agent_id), sovereign.id);
      assert.equal(byId.get(atOrg.agent_id), org.id);
      assert.deepEqual(federated.body.federation, { partial: false, children: [{ registry_id: sovereign.id, status: 'ok', result_count: 2 }] });
      const scores = federated.body.results.map((r: { score: number }) => r.score);
      assert.deepEqual(scores, [...scores].sort((a, b) => b - a), 'merged by rank');

      // A second sovereign that is down: reported, and the rest still answers.
      const france = await startRegistry(t, backend, { REGISTRY_TIER: 'sovereign', REGISTRY_NAME: 'ans', REGISTRY_JURISDICTION: 'FR', REGISTRY_PARENT_URL: root.baseUrl });
      await delegate(root, france, 'sovereign');
      await france.app.close();
      const partial = await root.call({ method: 'GET', url: '/v1/discover?capability=imaging.read&federated=true' });
      assert.equal(partial.status, 200);
      assert.equal(partial.body.results.length, 3);
      assert.equal(partial.body.federation.partial, true);
      const down = partial.body.federation.children.find((c: { registry_id: string }) => c.registry_id === france.id);
      assert.equal(down.status, 'unreachable');

      // A revoked child drops out.
      await sovereign.call({ method: 'POST', url: `/v1/registries/${encodeURIComponent(org.id)}/revoke`, headers: writeHeaders(), payload: { reason: 'test' } });
      const withoutOrg = await root.call({ method: 'GET', url: '/v1/discover?capability=imaging.read&federated=true' });
      assert.ok(!withoutOrg.body.results.some((r: { agent_id: string }) => r.agent_id === atOrg.agent_id));

      const atOrganisational = await org.call({ method: 'GET', url: '/v1/discover?capability=imaging.read&federated=true' });
      assert.equal(atOrganisational.status, 422);
      assert.equal(atOrganisational.body.error.code, 'TIER_VIOLATION');

      // A developer-tier key does not include federation; a business-tier key does.
      const developer = await root.call({ method: 'POST', url: '/v1/admin/billing/api-keys', headers: writeHeaders(), payload: { org_id: 'org-a', display_name: 'dev', tier: 'developer' } });
      const refused = await root.call({ method: 'GET', url: '/v1/discover?capability=imaging.read&federated=true', headers: { 'x-api-key': developer.body.raw_key } });
      assert.equal(refused.status, 403);
      assert.equal(refused.body.error.code, 'TIER_FEATURE_UNAVAILABLE');
      const business = await root.call({ method: 'POST', url: '/v1/admin/billing/api-keys', headers: writeHeaders(), payload: { org_id: 'org-a', display_name: 'biz', tier: 'business' } });
      const allowed = await root.call({ method: 'GET', url: '/v1/discover?capability=imaging.read&federated=true', headers: { 'x-api-key': business.body.raw_key } });
      assert.equal(allowed.status, 200);
    });

    test('a child accepts federation tokens from its parent only', async (t) => {
      const { root, sovereign } = await threeTiers(t, backend);
      const { issueFederationToken } = await import('../../../src/registry/federation/federation-token.ts');
      const good = await issueFederationToken(root.app.ward.signer, { iss: root.id, aud: sovereign.id, now: new Date() });
      const ok = await sovereign.call({ method: 'GET', url: '/v1/discover?capability=x.y', headers: { authorization: `Bearer ${good}` } });
      assert.equal(ok.status, 200);
      const write = await sovereign.call({ method: 'POST', url: '/v1/agents', headers: { ...writeHeaders(), authorization: `Bearer ${good}` }, payload: {} });
      assert.equal(write.status, 403, 'read-only');
      const stranger = await startRegistry(t, backend, { REGISTRY_NAME: 'stranger' });
      const forged = await issueFederationToken(stranger.app.ward.signer, { iss: root.id, aud: sovereign.id, now: new Date() });
      assert.equal((await sovereign.call({ method: 'GET', url: '/v1/discover?capability=x.y', headers: { authorization: `Bearer ${forged}` } })).status, 401);
      const otherAudience = await issueFederationToken(root.app.ward.signer, { iss: root.id, aud: root.id, now: new Date() });
      assert.equal((await sovereign.call({ method: 'GET', url: '/v1/discover?capability=x.y', headers: { authorization: `Bearer ${otherAudience}` } })).status, 401);
      const expired = await issueFederationToken(root.app.ward.signer, { iss: root.id, aud: sovereign.id, now: new Date(Date.now() - 10 * 60_000) });
      assert.equal((await sovereign.call({ method: 'GET', url: '/v1/discover?capability=x.y', headers: { authorization: `Bearer ${expired}` } })).status, 401);
    });
  });
}
