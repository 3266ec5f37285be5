import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compactVerify, createLocalJWKSet } from 'jose';
import { setHealthRank } from '../../../src/registry/agents/storage/agent-store.ts';
import { upsertEndpointHealth } from '../../../src/registry/agents/storage/endpoint-health-store.ts';
import { BACKENDS, buildTestRegistry, registerAgent, ulidOf, writeHeaders, type TestRegistry } from '../../helpers/registry.ts';
import { makeCertificate } from '../agents/evidence/fixtures.ts';

const DAY = 86_400_000;
/** A certificate valid now (the trust fixtures' default window is relative to their fixed test date). */
const currentCertificate = () => makeCertificate({ notBefore: new Date(Date.now() - DAY), notAfter: new Date(Date.now() + 365 * DAY) }).pem;

const discover = (registry: TestRegistry, query: string) => registry.call({ method: 'GET', url: `/v1/discover?${query}` });
const names = (body: { results: Array<{ display_name: string }> }) => body.results.map((r) => r.display_name);

function endpoint(overrides: Record<string, unknown> = {}) {
  return { url: 'https://agents.example.org/a2a', protocol: 'mesh-a2a-jsonrpc', ...overrides };
}

for (const backend of BACKENDS) {
  describe(`discovery [${backend}]`, () => {
    test('capability matches skills; only active, trust-validated agents appear', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      await registerAgent(registry, { display_name: 'Consent A', capabilities: { skills: ['consent.verify'] } });
      await registerAgent(registry, { display_name: 'Triage', capabilities: { skills: ['triage.assess'] } });
      const suspended = await registerAgent(registry, { display_name: 'Consent suspended', capabilities: { skills: ['consent.verify'] } });
      await registry.call({ method: 'POST', url: `/v1/agents/${ulidOf(suspended.agent_id)}/suspend`, headers: writeHeaders(), payload: { reason: 'x' } });
      await registerAgent(registry, { display_name: 'Consent untrusted', capabilities: { skills: ['consent.verify'] }, trust: { certificates: ['garbage'] } });
      const response = await discover(registry, 'capability=consent.verify');
      assert.equal(response.status, 200);
      assert.deepEqual(names(response.body), ['Consent A']);
      assert.equal(response.body.result_count, 1);
      assert.deepEqual((await discover(registry, 'capability=nothing.here')).body.results, []);
    });

    test('each filter narrows the results: jurisdiction, features, protocol, token binding, residency, purpose', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const skills = ['consent.verify'];
      await registerAgent(registry, {
        display_name: 'GB full',
        jurisdiction: 'GB',
        endpoints: [endpoint({ region: 'uk-south' })],
        capabilities: { skills, features: ['idempotency_strict'], stream_resume: true, protocols: ['mesh-a2a-jsonrpc'], token_binding: 'mtls_cnf_x5t_s256' },
        policy_tags: { purpose_of_use: ['treatment', 'research'] },
      });
      await registerAgent(registry, {
        display_name: 'FR fhir',
        jurisdiction: 'FR',
        endpoints: [endpoint({ protocol: 'fhir-rest', region: 'eu-west' })],
        capabilities: { skills, token_binding: 'dpop' },
        policy_tags: { purpose_of_use: ['payment'] },
      });
      await registerAgent(registry, { display_name: 'GB open', jurisdiction: 'GB', endpoints: [endpoint()], capabilities: { skills }, policy_tags: {} });
      const cases: Array<[string, string[]]> = [
        ['jurisdiction=fr', ['FR fhir']],
        ['require_features=stream_resume', ['GB full']],
        ['require_features=stream_resume,idempotency_strict', ['GB full']],
        ['require_features=stream_resume&require_features=idempotency_strict', ['GB full']],
        ['require_features=stream_resume,fhir_r4', []],
        ['protocol=fhir-rest', ['FR fhir']],
        ['token_binding=dpop', ['FR fhir']],
        ['token_binding=none', ['GB open']],
        ['residency=eu-west', ['FR fhir']],
        ['purpose_of_use=research', ['GB full', 'GB open']],
        ['purpose_of_use=payment', ['FR fhir', 'GB open']],
        ['jurisdiction=GB&protocol=mesh-a2a-jsonrpc&purpose_of_use=treatment', ['GB full', 'GB open']],
      ];
      for (const [query, expected] of cases) {
        const response = await discover(registry, `capability=consent.verify&${query}`);
        assert.equal(response.status, 200, query);
        assert.deepEqual(names(response.body).sort(), [...expected].sort(), query);
      }
    });

    test('the query is echoed as applied and limit caps the results', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      for (let i = 0; i < 5; i += 1) await registerAgent(registry, { capabilities: { skills: ['triage.assess'] } });
      const response = await discover(registry, 'capability=triage.assess&jurisdiction=gb&require_features=a,b&limit=3');
      assert.deepEqual(response.body.query, { capability: 'triage.assess', jurisdiction: 'GB', require_features: ['a', 'b'], limit: 3 });
      const limited = await discover(registry, 'capability=triage.assess&limit=3');
      assert.equal(limited.body.results.length, 3);
      assert.equal(limited.body.result_count, 3);
      assert.equal((await discover(registry, 'capability=triage.assess')).body.result_count, 5);
    });

    test('ranking: trust level, then health, then jurisdiction, then priority, then age — and it explains itself', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const skills = ['rank.me'];
      const cert = currentCertificate();
      await registerAgent(registry, { display_name: 'old low priority', endpoints: [endpoint({ priority: 50 })], capabilities: { skills } });
      await registerAgent(registry, { display_name: 'young low priority', endpoints: [endpoint({ priority: 50 })], capabilities: { skills } });
      await registerAgent(registry, { display_name: 'high priority', endpoints: [endpoint({ priority: 1 })], capabilities: { skills } });
      await registerAgent(registry, { display_name: 'foreign', jurisdiction: 'FR', endpoints: [endpoint({ priority: 0 })], capabilities: { skills } });
      const healthy = await registerAgent(registry, { display_name: 'healthy', endpoints: [endpoint({ priority: 90 })], capabilities: { skills } });
      const unhealthy = await registerAgent(registry, { display_name: 'unhealthy', endpoints: [endpoint({ priority: 0 })], capabilities: { skills } });
      await registerAgent(registry, { display_name: 'certified', endpoints: [endpoint({ priority: 99 })], capabilities: { skills }, trust: { certificates: [cert] } });
      for (const [agent, status, rank] of [[healthy, 'healthy', 2], [unhealthy, 'unhealthy', 0]] as const) {
        await upsertEndpointHealth(registry.storage.db, {
          agent_id: ulidOf(agent.agent_id),
          endpoint_index: 0,
          url: agent.endpoints[0].url,
          status,
          reason: status === 'healthy' ? null : 'timeout',
          latency_ms: 5,
          checked_at: new Date().toISOString(),
        });
        await setHealthRank(registry.storage.db, ulidOf(agent.agent_id), rank);
      }
      const response = await discover(registry, 'capability=rank.me');
      assert.deepEqual(names(response.body), ['certified', 'healthy', 'high priority', 'old low priority', 'young low priority', 'foreign', 'unhealthy']);
      const scores = response.body.results.map((r: { score: number }) => r.score);
      assert.deepEqual(scores, [...scores].sort((a, b) => b - a), 'scores descend with the order');
      const [first] = response.body.results;
      assert.deepEqual(first.score_breakdown, { trust_level: 1000, health: 100, jurisdiction: 10, priority: 5.02 });
      assert.equal(first.score, 1115.02);
      const foreignFirst = await discover(registry, 'capability=rank.me&jurisdiction=FR');
      assert.deepEqual(names(foreignFirst.body), ['foreign']);
      assert.equal(foreignFirst.body.results[0].score_breakdown.jurisdiction, 10);
      assert.equal(response.body.results[0].endpoints[0].health.status, 'unknown');
      assert.equal(response.body.results[1].endpoints[0].health.status, 'healthy');
    });

    test('each result links its trust bundle, and the bundle answers', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const agent = await registerAgent(registry, { capabilities: { skills: ['consent.verify'] } });
      const [result] = (await discover(registry, 'capability=consent.verify')).body.results;
      const url = new URL(result.trust_bundle_url);
      assert.equal(url.searchParams.get('subject'), agent.agent_id);
      const bundle = await registry.call({ method: 'GET', url: `${url.pathname}${url.search}` });
      assert.equal(bundle.status, 200);
      assert.equal(bundle.body.subject, agent.agent_id);
    });

    test('signed_response is a JWS by the registry over {query, results, result_count, iss, iat}', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      await registerAgent(registry, { capabilities: { skills: ['consent.verify'] } });
      const { signed_response, ...body } = (await discover(registry, 'capability=consent.verify')).body;
      const jwks = (await registry.call({ method: 'GET', url: '/.well-known/jwks.json' })).body;
      const { payload } = await compactVerify(signed_response, createLocalJWKSet(jwks));
      const claims = JSON.parse(new TextDecoder().decode(payload));
      assert.deepEqual(Object.keys(claims).sort(), ['iat', 'iss', 'query', 'result_count', 'results']);
      assert.deepEqual({ query: claims.query, results: claims.results, result_count: claims.result_count }, body);
      assert.equal(claims.iss, registry.app.ward.baseUrl());
      const unsigned = await buildTestRegistry(t, backend, { env: { REGISTRY_SIGN_RESPONSES: 'false' } });
      assert.equal((await discover(unsigned, 'capability=consent.verify')).body.signed_response, undefined);
    });

    test('a cached answer is dropped as soon as the registry changes, and after 30 s at most', async (t) => {
      const clock = { at: Date.now(), now() { return new Date(this.at); } };
      const registry = await buildTestRegistry(t, backend, { clock });
      await registerAgent(registry, { display_name: 'first', capabilities: { skills: ['cache.me'] } });
      const first = await discover(registry, 'capability=cache.me');
      const again = await discover(registry, 'capability=cache.me');
      assert.equal(again.body.signed_response, first.body.signed_response, 'the second answer came from the cache');
      const second = await registerAgent(registry, { display_name: 'second', capabilities: { skills: ['cache.me'] } });
      assert.deepEqual(names((await discover(registry, 'capability=cache.me')).body).sort(), ['first', 'second'], 'a write invalidates');
      await registry.call({ method: 'POST', url: `/v1/agents/${ulidOf(second.agent_id)}/suspend`, headers: writeHeaders(), payload: { reason: 'x' } });
      assert.deepEqual(names((await discover(registry, 'capability=cache.me')).body), ['first'], 'a status change invalidates');
      const cached = (await discover(registry, 'capability=cache.me')).body.signed_response;
      clock.at += 31_000;
      assert.notEqual((await discover(registry, 'capability=cache.me')).body.signed_response, cached, 'an old answer is recomputed');
    });

    test('a selective filter still finds matches ranked below many non-matching agents', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      for (let i = 0; i < 60; i += 1) {
        await registerAgent(registry, { display_name: `plain ${i}`, endpoints: [endpoint({ priority: 0 })], capabilities: { skills: ['bulk.skill'] } });
      }
      await registerAgent(registry, { display_name: 'rare', endpoints: [endpoint({ priority: 999 })], capabilities: { skills: ['bulk.skill'], features: ['rare_feature'] } });
      const response = await discover(registry, 'capability=bulk.skill&require_features=rare_feature&limit=1');
      assert.deepEqual(names(response.body), ['rare']);
    });

    test('bad queries are 422 in the envelope: missing capability, bad enum, bad jurisdiction, bad limit, unknown parameter', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const cases: Array<[string, string]> = [
        ['', '/capability'],
        ['capability=Not A Skill', '/capability'],
        ['capability=a.b&token_binding=magic', '/token_binding'],
        ['capability=a.b&purpose_of_use=marketing', '/purpose_of_use'],
        ['capability=a.b&jurisdiction=UK', '/jurisdiction'],
        ['capability=a.b&limit=0', '/limit'],
        ['capability=a.b&limit=101', '/limit'],
        ['capability=a.b&require_features=ok,Not%20OK', '/require_features/1'],
        ['capability=a.b&colour=red', '/colour'],
      ];
      for (const [query, pointer] of cases) {
        const response = await discover(registry, query);
        assert.equal(response.status, 422, query);
        assert.equal(response.body.error.code, 'VALIDATION_ERROR', query);
        assert.ok(response.body.error.details.errors.some((e: { pointer: string }) => e.pointer === pointer), `${query}: ${JSON.stringify(response.body.error.details)}`);
      }
    });
  });
}
