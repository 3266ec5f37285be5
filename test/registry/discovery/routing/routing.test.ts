import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compactVerify, createLocalJWKSet } from 'jose';
import { upsertEndpointHealth } from '../../../../src/registry/agents/storage/endpoint-health-store.ts';
import { verifyTrustBundle } from '../../../../src/client/trust/bundle-verifier.ts';
import { BACKENDS, buildTestRegistry, registerAgent, ulidOf, writeHeaders, type TestRegistry } from '../../../helpers/registry.ts';

const route = (registry: TestRegistry, payload: Record<string, unknown>, requestId = 'fixed-request') =>
  registry.call({ method: 'POST', url: '/v1/route', headers: { 'x-request-id': requestId }, payload });

const endpoints = [
  { url: 'https://primary.example.org/a2a', protocol: 'mesh-a2a-jsonrpc', priority: 10, region: 'uk-south' },
  { url: 'https://backup.example.org/a2a', protocol: 'mesh-a2a-jsonrpc', priority: 20, region: 'eu-west' },
  { url: 'https://fhir.example.org/r4', protocol: 'fhir-rest', priority: 5, region: 'uk-south' },
];

for (const backend of BACKENDS) {
  describe(`routing [${backend}]`, () => {
    test('a target gets the best endpoint, failover alternatives, constraints, evidence and a trust bundle', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const agent = await registerAgent(registry, {
        endpoints,
        policy_tags: { purpose_of_use: ['treatment'], phi_allowed: true, max_concurrency: 4, rate_limit_rps: 10 },
      });
      const response = await route(registry, { target: agent.agent_id, protocol: 'mesh-a2a-jsonrpc', purpose: { purpose_of_use: 'treatment' } });
      assert.equal(response.status, 200);
      const body = response.body;
      assert.equal(body.resolved_target, agent.agent_id);
      assert.deepEqual(body.selected, {
        endpoint: 'https://primary.example.org/a2a',
        url: 'https://primary.example.org/a2a',
        priority: 10,
        protocol: 'mesh-a2a-jsonrpc',
        region: 'uk-south',
        weight: 100,
        health: 'unknown',
      });
      assert.deepEqual(body.alternatives, [
        { endpoint: 'https://backup.example.org/a2a', url: 'https://backup.example.org/a2a', priority: 20, protocol: 'mesh-a2a-jsonrpc', region: 'eu-west' },
      ]);
      assert.deepEqual(body.constraints, { phi_allowed: true, max_concurrency_hint: 4, rate_limit_rps_hint: 10 });
      assert.deepEqual(body.evidence, { registry_id: 'registry://gb/registries/local', record_version: '1', delegation_chain: ['registry://gb/registries/local'] });
      const jwks = (await registry.call({ method: 'GET', url: '/.well-known/jwks.json' })).body;
      const verification = await verifyTrustBundle(body.trust_bundle, { jwks, registry_id: 'registry://gb/registries/local' });
      const { steps, ...outcome } = verification;
      assert.deepEqual(outcome, { valid: true, subject: agent.agent_id, errors: [] });
      assert.deepEqual(
        steps.map((step) => [step.name, step.status]),
        // A root's bundle without trust marks carries no OIDF chain (decision 95): the anchor's keys suffice.
        [['Trust anchor', 'passed'], ['Delegation chain', 'passed'], ['Subject constraints', 'passed'], ['Bundle signature', 'passed']],
      );
    });

    test('routing by capability picks the best-ranked agent that has an eligible endpoint', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      await registerAgent(registry, { display_name: 'fhir only', capabilities: { skills: ['consent.verify'] }, endpoints: [{ url: 'https://f.example.org', protocol: 'fhir-rest', priority: 0 }] });
      const mesh = await registerAgent(registry, { display_name: 'mesh', capabilities: { skills: ['consent.verify'] }, endpoints: [{ url: 'https://m.example.org', protocol: 'mesh-a2a-jsonrpc', priority: 50 }] });
      const response = await route(registry, { capability: 'consent.verify', protocol: 'mesh-a2a-jsonrpc' });
      assert.equal(response.status, 200);
      assert.equal(response.body.resolved_target, mesh.agent_id);
      const none = await route(registry, { capability: 'consent.verify', protocol: 'hl7v2-mllp' });
      assert.equal(none.status, 422);
      assert.equal(none.body.error.code, 'NO_ROUTE');
      const nobody = await route(registry, { capability: 'nobody.has.this' });
      assert.deepEqual(nobody.body.error.details.candidates, []);
    });

    test('phi_allowed needs the agent to allow it and the purpose to be accepted; hints default to 16 and 50', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const allows = await registerAgent(registry, { policy_tags: { phi_allowed: true, purpose_of_use: ['treatment'] } });
      const silent = await registerAgent(registry, { policy_tags: {} });
      assert.equal((await route(registry, { target: allows.agent_id })).body.constraints.phi_allowed, false, 'no purpose given');
      assert.equal((await route(registry, { target: allows.agent_id, purpose: { purpose_of_use: 'treatment' } })).body.constraints.phi_allowed, true);
      const other = await route(registry, { target: allows.agent_id, purpose: { purpose_of_use: 'research' } });
      assert.equal(other.status, 422, 'a purpose the agent does not accept excludes it');
      assert.deepEqual((await route(registry, { target: silent.agent_id, purpose: { purpose_of_use: 'research' } })).body.constraints, {
        phi_allowed: false,
        max_concurrency_hint: 16,
        rate_limit_rps_hint: 50,
      });
    });

    test('residency and cross-border policy exclude endpoints and agents, with a reason per endpoint', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const agent = await registerAgent(registry, { endpoints, policy_tags: { cross_border: false } });
      const inZone = await route(registry, { target: agent.agent_id, residency: { allowed_zones: ['eu-west'], deny_cross_zone: true } });
      assert.equal(inZone.body.selected.url, 'https://backup.example.org/a2a');
      assert.deepEqual(inZone.body.alternatives, []);
      const preferred = await route(registry, { target: agent.agent_id, residency: { allowed_zones: ['eu-west'] } });
      assert.equal(preferred.body.selected.url, 'https://backup.example.org/a2a');
      assert.equal(preferred.body.alternatives.length, 2, 'without deny_cross_zone the others stay as failover');
      const nowhere = await route(registry, { target: agent.agent_id, residency: { allowed_zones: ['ap-south'], deny_cross_zone: true } });
      assert.equal(nowhere.status, 422);
      assert.deepEqual(nowhere.body.error.details.endpoints.map((e: { reasons: string[] }) => e.reasons), [['residency'], ['residency'], ['residency']]);
      const foreign = await route(registry, { target: agent.agent_id, caller_jurisdiction: 'fr' });
      assert.equal(foreign.status, 422);
      assert.deepEqual(foreign.body.error.details.endpoints[0].reasons, ['cross_border']);
      assert.equal((await route(registry, { target: agent.agent_id, caller_jurisdiction: 'GB' })).status, 200);
    });

    test('errors: unknown target 404, inactive target 409, neither or both of target and capability 422', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const agent = await registerAgent(registry);
      assert.equal((await route(registry, { target: 'registry://gb/agents/01J00000000000000000000000' })).body.error.code, 'AGENT_NOT_FOUND');
      assert.equal((await route(registry, { target: 'not-a-uri' })).status, 404);
      await registry.call({ method: 'POST', url: `/v1/agents/${ulidOf(agent.agent_id)}/suspend`, headers: writeHeaders(), payload: { reason: 'x' } });
      const inactive = await route(registry, { target: agent.agent_id });
      assert.equal(inactive.status, 409);
      assert.equal(inactive.body.error.code, 'AGENT_NOT_ACTIVE');
      assert.equal(inactive.body.error.details.status, 'suspended');
      const untrusted = await registerAgent(registry, { trust: { certificates: ['nope'] } });
      assert.equal((await route(registry, { target: untrusted.agent_id })).body.error.details.trust_validation_state, 'failed');
      assert.equal((await route(registry, {})).status, 422);
      assert.equal((await route(registry, { target: agent.agent_id, capability: 'a.b' })).status, 422);
      assert.equal((await route(registry, { capability: 'a.b', caller_jurisdiction: 'UK' })).body.error.details.errors[0].pointer, '/caller_jurisdiction');
      assert.equal((await route(registry, { capability: 'a.b', workload: { priority: 'whenever' } })).status, 422);
    });

    test('target_agent_id (the MCP tool\'s and the spec\'s name) is the same as target; both at once is 422', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const agent = await registerAgent(registry, { endpoints });
      const byTarget = await route(registry, { target: agent.agent_id });
      const byTargetAgentId = await route(registry, { target_agent_id: agent.agent_id });
      assert.equal(byTargetAgentId.status, 200);
      assert.deepEqual(byTargetAgentId.body.selected, byTarget.body.selected);
      assert.equal(byTargetAgentId.body.resolved_target, agent.agent_id);
      const both = await route(registry, { target: agent.agent_id, target_agent_id: agent.agent_id });
      assert.equal(both.status, 422);
      assert.equal(both.body.error.details.errors[0].pointer, '/target_agent_id');
      assert.equal((await route(registry, { target_agent_id: agent.agent_id, capability: 'a.b' })).status, 422);
    });

    test('the same request id gets the same weighted choice; the advice is signed', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const agent = await registerAgent(registry, {
        endpoints: Array.from({ length: 5 }, (_, i) => ({ url: `https://n${i}.example.org`, protocol: 'mesh-a2a-jsonrpc', weight: 100 })),
      });
      const first = await route(registry, { target: agent.agent_id }, 'req-A');
      const again = await route(registry, { target: agent.agent_id }, 'req-A');
      assert.equal(first.body.selected.url, again.body.selected.url);
      assert.deepEqual(first.body.alternatives, again.body.alternatives);
      const seen = new Set<string>();
      for (let i = 0; i < 40; i += 1) seen.add((await route(registry, { target: agent.agent_id }, `req-${i}`)).body.selected.url);
      assert.ok(seen.size >= 3, 'different requests spread over equal endpoints');
      const { signed_response, ...advice } = first.body;
      const jwks = (await registry.call({ method: 'GET', url: '/.well-known/jwks.json' })).body;
      const { payload } = await compactVerify(signed_response, createLocalJWKSet(jwks));
      assert.deepEqual(JSON.parse(new TextDecoder().decode(payload)), advice);
    });

    test('the same advice reuses its signature; advice that changed is signed afresh, over its new bytes', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const agent = await registerAgent(registry, { endpoints });
      const jwks = createLocalJWKSet((await registry.call({ method: 'GET', url: '/.well-known/jwks.json' })).body);
      const verifiedAdvice = async (signed: string) => JSON.parse(new TextDecoder().decode((await compactVerify(signed, jwks)).payload));
      const first = await route(registry, { target: agent.agent_id });
      const again = await route(registry, { target: agent.agent_id });
      // ES256 signatures are randomised: equal ones are one signature, reused.
      assert.equal(again.body.signed_response, first.body.signed_response);
      const id = ulidOf(agent.agent_id);
      await registry.call({ method: 'POST', url: `/v1/agents/${id}/suspend`, headers: writeHeaders(), payload: { reason: 'maintenance' } });
      await registry.call({ method: 'POST', url: `/v1/agents/${id}/reinstate`, headers: writeHeaders(), payload: {} });
      const changed = await route(registry, { target: agent.agent_id });
      assert.equal(changed.body.evidence.record_version, '3');
      assert.notEqual(changed.body.signed_response, first.body.signed_response);
      const { signed_response, ...advice } = changed.body;
      assert.deepEqual(await verifiedAdvice(signed_response), advice);
    });

    test('kept advice is never served under a retired signing key: after a rotation it is signed by the new one', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const agent = await registerAgent(registry, { endpoints });
      const kidOf = (signed: string) => JSON.parse(Buffer.from(signed.split('.')[0] as string, 'base64url').toString()).kid as string;
      const before = await route(registry, { target: agent.agent_id });
      const rotated = await registry.call({ method: 'POST', url: '/v1/trust/keys/rotate', headers: writeHeaders(), payload: {} });
      assert.equal(rotated.status, 201, JSON.stringify(rotated.body));
      const after = await route(registry, { target: agent.agent_id });
      assert.notEqual(kidOf(after.body.signed_response), kidOf(before.body.signed_response));
      assert.equal(kidOf(after.body.signed_response), registry.app.ward.signer.kid);
      const jwks = createLocalJWKSet((await registry.call({ method: 'GET', url: '/.well-known/jwks.json' })).body);
      const { signed_response, ...advice } = after.body;
      assert.deepEqual(JSON.parse(new TextDecoder().decode((await compactVerify(signed_response, jwks)).payload)), advice);
    });

    test('a capability route keeps its choice only while nothing changes: a suspended choice is routed around at once', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const skill = { capabilities: { skills: ['referral.triage'] } };
      const best = await registerAgent(registry, { ...skill, display_name: 'best', endpoints: [{ url: 'https://best.example.org', protocol: 'mesh-a2a-jsonrpc', priority: 0 }] });
      const next = await registerAgent(registry, { ...skill, display_name: 'next', endpoints: [{ url: 'https://next.example.org', protocol: 'mesh-a2a-jsonrpc', priority: 50 }] });
      const request = { capability: 'referral.triage', protocol: 'mesh-a2a-jsonrpc' };
      assert.equal((await route(registry, request)).body.resolved_target, best.agent_id);
      assert.equal((await route(registry, request)).body.resolved_target, best.agent_id);
      await registry.call({ method: 'POST', url: `/v1/agents/${ulidOf(best.agent_id)}/suspend`, headers: writeHeaders(), payload: { reason: 'maintenance' } });
      assert.equal((await route(registry, request)).body.resolved_target, next.agent_id);
      await registry.call({ method: 'POST', url: `/v1/agents/${ulidOf(next.agent_id)}/suspend`, headers: writeHeaders(), payload: { reason: 'maintenance' } });
      assert.equal((await route(registry, request)).body.error.code, 'NO_ROUTE');
    });

    test('a reading that only confirms a status (no event) reaches routing within 5 s, the most a record is kept', async (t) => {
      const clock = { at: Date.now(), now() { return new Date(this.at); } };
      const registry = await buildTestRegistry(t, backend, { clock });
      const url = 'https://only.example.org/a2a';
      const agent = await registerAgent(registry, { endpoints: [{ url, protocol: 'mesh-a2a-jsonrpc', priority: 0 }] });
      const reading = (at: number) =>
        upsertEndpointHealth(registry.storage.db, { agent_id: ulidOf(agent.agent_id), endpoint_index: 0, url, status: 'healthy', reason: null, latency_ms: 5, checked_at: new Date(at).toISOString() });
      const health = async () => (await route(registry, { target: agent.agent_id })).body.selected.health;
      const start = clock.at;
      await reading(start);
      clock.at = start + 89_000; // the reading is 89 s old: fresh (stale after 3 × 30 s)
      assert.equal(await health(), 'healthy');
      await reading(clock.at); // the prober confirms: nothing committed through a write unit, no event
      clock.at += 2_000; // the kept record's reading is now 91 s old
      assert.equal(await health(), 'unknown', 'the record kept 2 s ago still has the old reading');
      clock.at += 4_000; // the kept record is 6 s old: read again
      assert.equal(await health(), 'healthy');
    });

    test('the embedded trust bundle is reused for a while but never served expired', async (t) => {
      const clock = { at: Date.now(), now() { return new Date(this.at); } };
      const registry = await buildTestRegistry(t, backend, { clock });
      const agent = await registerAgent(registry);
      const first = (await route(registry, { target: agent.agent_id })).body.trust_bundle;
      assert.deepEqual((await route(registry, { target: agent.agent_id })).body.trust_bundle, first, 'reused');
      clock.at += 2 * 60 * 60 * 1000;
      const later = (await route(registry, { target: agent.agent_id })).body.trust_bundle;
      assert.ok(Date.parse(later.expires_at) > clock.at, 'a fresh bundle after the old one expired');
    });

    test('routing ignores an X-Idempotency-Key and changes nothing', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const agent = await registerAgent(registry);
      const count = async (table: 'events' | 'idempotency_keys') => (await registry.storage.db.selectFrom(table).selectAll().execute()).length;
      const [events, keys] = [await count('events'), await count('idempotency_keys')];
      const response = await registry.call({ method: 'POST', url: '/v1/route', headers: { 'x-idempotency-key': 'not-even-a-uuid' }, payload: { target: agent.agent_id } });
      assert.equal(response.status, 200);
      assert.equal(await count('events'), events);
      assert.equal(await count('idempotency_keys'), keys);
    });
  });
}
