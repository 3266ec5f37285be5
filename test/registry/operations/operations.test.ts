import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test, type TestContext } from 'node:test';
import { bearer, createKey } from '../../helpers/keys.ts';
import { BACKENDS, agentBody, buildTestRegistry, registerAgent, ulidOf, writeHeaders } from '../../helpers/registry.ts';
import { makeCertificate } from '../agents/evidence/fixtures.ts';

const DAY_MS = 86_400_000;

/** A loopback health endpoint whose answer the test switches between 200 and 500. */
async function healthPeer(t: TestContext) {
  let healthy = true;
  const server: Server = createServer((_request, response) => void response.writeHead(healthy ? 200 : 500).end('{}'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, set: (next: boolean) => void (healthy = next) };
}

const withHealth = (url: string) => ({
  endpoints: [{ url: 'https://agents.example.org/fhir', protocol: 'fhir-rest', priority: 10, health_url: `${url}/health` }],
  capabilities: { protocols: ['fhir-rest'], skills: ['triage.assess'] },
});

for (const backend of BACKENDS) {
  describe(`registry operations endpoints [${backend}]`, () => {
    test('the overview counts agents by status and trust, endpoints by health, and finds endpoints down and flapping', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const peer = await healthPeer(t);
      const steady = await registerAgent(registry, withHealth(peer.url));
      const other = await healthPeer(t);
      const flaky = await registerAgent(registry, withHealth(other.url));
      const suspended = await registerAgent(registry);
      await registerAgent(registry, { trust: { certificates: ['not a certificate'], signatures: [], attestations: [] } });
      await registry.call({ method: 'POST', url: `/v1/agents/${ulidOf(suspended.agent_id)}/suspend`, headers: writeHeaders(), payload: { reason: 'review' } });

      await registry.app.ward.healthProber.runOnce();
      for (const healthy of [false, true, false]) {
        other.set(healthy);
        await registry.app.ward.healthProber.runOnce();
      }
      const { status, body } = await registry.call({ method: 'GET', url: '/v1/admin/overview' });
      assert.equal(status, 200);
      assert.deepEqual(body.agents.by_status, { active: 3, suspended: 1, revoked: 0, retired: 0 });
      assert.equal(body.agents.total, 4);
      assert.deepEqual(body.agents.by_trust_state, { validated: 3, failed: 1, pending: 0 });
      // Active agents: steady and flaky (one probed endpoint each) and the failed one (not probed).
      assert.equal(body.endpoints.total, 3);
      assert.equal(body.endpoints.healthy + body.endpoints.degraded, 1);
      assert.equal(body.endpoints.down, 1);
      assert.equal(body.endpoints.unknown, 1);
      assert.equal(body.endpoints_down.length, 1);
      assert.equal(body.endpoints_down[0].agent_id, flaky.agent_id);
      assert.equal(body.endpoints_down[0].display_name, flaky.display_name);
      assert.ok(body.endpoints_down[0].down_since, 'when it went down is known from its health change');
      assert.equal(body.endpoints_flapping.length, 1);
      assert.equal(body.endpoints_flapping[0].agent_id, flaky.agent_id);
      assert.equal(body.endpoints_flapping[0].changes_last_hour, 4);
      assert.equal(body.health_history.length, 25, 'one point an hour over the last day');
      const last = body.health_history.at(-1);
      assert.deepEqual({ healthy: last.healthy, down: last.down, unknown: last.unknown }, { healthy: 1, down: 1, unknown: 1 });
      const first = body.health_history[0];
      assert.deepEqual({ healthy: first.healthy, down: first.down, unknown: first.unknown }, { healthy: 0, down: 0, unknown: 3 }, 'a day ago nothing had been probed');
      assert.ok(steady.agent_id);
    });

    test('trust evidence lapsing within 30 days is listed, soonest first, and records without certificates are not', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const now = Date.now();
      const soon = makeCertificate({ notBefore: new Date(now - 30 * DAY_MS), notAfter: new Date(now + 10 * DAY_MS) });
      const sooner = makeCertificate({ notBefore: new Date(now - 30 * DAY_MS), notAfter: new Date(now + 3 * DAY_MS) });
      const later = makeCertificate({ notBefore: new Date(now - 30 * DAY_MS), notAfter: new Date(now + 90 * DAY_MS) });
      const a = await registerAgent(registry, { trust: { certificates: [soon.pem], signatures: [], attestations: [] } });
      const b = await registerAgent(registry, { trust: { certificates: [later.pem, sooner.pem], signatures: [], attestations: [] } });
      const c = await registerAgent(registry, { trust: { certificates: [later.pem], signatures: [], attestations: [] } });
      await registerAgent(registry);
      assert.equal(a.trust_validation.expires_at, new Date(Math.floor((now + 10 * DAY_MS) / 1000) * 1000).toISOString());
      assert.equal(c.trust_validation.level, 1);
      const { body } = await registry.call({ method: 'GET', url: '/v1/admin/overview' });
      assert.deepEqual(body.trust_expiring.map((entry: { agent_id: string }) => entry.agent_id), [b.agent_id, a.agent_id]);
    });

    test("the overview charts this instance's requests and errors per minute", async (t) => {
      const registry = await buildTestRegistry(t, backend);
      await registry.call({ method: 'GET', url: '/v1/agents' });
      await registry.call({ method: 'GET', url: '/v1/agents/01J00000000000000000000000' });
      await registry.call({ method: 'GET', url: '/no/such/route' });
      const { body } = await registry.call({ method: 'GET', url: '/v1/admin/overview' });
      assert.equal(body.traffic.minutes.length, 60);
      const now = body.traffic.minutes.at(-1);
      assert.equal(now.requests, 3, 'three answered; the overview itself is counted once it is answered');
      assert.equal(now.client_errors, 2);
      assert.equal(now.server_errors, 0);
    });

    test('diagnostics describe the instance, storage, event log, ledger, cache and configuration with secrets redacted', async (t) => {
      const registry = await buildTestRegistry(t, backend, { env: { MESH_JWT_SECRET: 'a-secret-that-must-not-show-1234567890' } });
      await registerAgent(registry);
      for (let i = 0; i < 2; i += 1) await registry.call({ method: 'GET', url: '/v1/discover?capability=triage.assess' });
      const { status, body } = await registry.call({ method: 'GET', url: '/v1/admin/diagnostics' });
      assert.equal(status, 200);
      assert.match(body.version, /^\d+\.\d+\.\d+/);
      assert.equal(body.storage.backend, backend);
      assert.deepEqual(body.storage.migrations.pending, []);
      assert.equal(body.storage.migrations.applied, body.storage.migrations.expected);
      assert.equal(body.events.last_seq, 2, 'registered and trust-validated');
      assert.equal(body.ledger.tree_size, 2);
      assert.equal(body.instances.live, null, 'not listening: no heartbeat yet');
      assert.deepEqual(body.redis, { configured: false, reachable: null, latency_ms: null });
      assert.equal(body.discovery_cache.hits, 1);
      assert.equal(body.discovery_cache.misses, 1);
      assert.equal(body.discovery_cache.hit_ratio, 0.5);
      assert.equal(body.configuration.MESH_JWT_SECRET, '[redacted]');
      assert.equal(body.configuration.REGISTRY_PORT, 8080);
      assert.ok(!JSON.stringify(body).includes('a-secret-that-must-not-show'));
    });

    test('overview and diagnostics need registry:admin; the caller endpoint says who a credential is', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const reader = await createKey(registry, { org_id: 'org-r', tier: 'team', scopes: ['registry:read'] });
      for (const url of ['/v1/admin/overview', '/v1/admin/diagnostics']) {
        const refused = await registry.call({ method: 'GET', url, headers: bearer(reader.raw_key) });
        assert.equal(refused.status, 403, url);
        assert.equal(refused.body.error.details.required_scope, 'registry:admin');
      }
      const me = await registry.call({ method: 'GET', url: '/v1/caller', headers: bearer(reader.raw_key) });
      assert.deepEqual(me.body, { kind: 'api_key', credential_id: reader.key_id, org_id: 'org-r', scopes: ['registry:read'], tier: 'team' });
      const anonymous = await registry.call({ method: 'GET', url: '/v1/caller' });
      assert.equal(anonymous.body.kind, 'anonymous');
      assert.deepEqual(anonymous.body.scopes, ['registry:read', 'registry:write', 'registry:admin', 'mesh:invoke'], 'auth disabled: every scope');
      const revoked = await registry.call({ method: 'GET', url: '/v1/caller', headers: bearer('rk_' + 'x'.repeat(40)) });
      assert.equal(revoked.status, 401, 'a credential that does not verify is not the anonymous caller');
    });

    test('the event history pages back newest first, by subject and by type, under the stream tier rule', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const first = await registerAgent(registry);
      const second = await registerAgent(registry);
      await registry.call({ method: 'POST', url: `/v1/agents/${ulidOf(first.agent_id)}/suspend`, headers: writeHeaders(), payload: { reason: 'review' } });
      const all = await registry.call({ method: 'GET', url: '/v1/events?limit=2' });
      assert.equal(all.status, 200);
      assert.deepEqual(all.body.events.map((e: { seq: number }) => e.seq), [5, 4]);
      assert.equal(all.body.last_seq, 5);
      assert.equal(all.body.oldest_retained_seq, 1);
      const older = await registry.call({ method: 'GET', url: `/v1/events?limit=2&cursor=${all.body.next_cursor}` });
      assert.deepEqual(older.body.events.map((e: { seq: number }) => e.seq), [3, 2]);
      const rest = await registry.call({ method: 'GET', url: `/v1/events?limit=2&cursor=${older.body.next_cursor}` });
      assert.deepEqual(rest.body.events.map((e: { seq: number }) => e.seq), [1]);
      assert.equal(rest.body.next_cursor, null);
      const history = await registry.call({ method: 'GET', url: `/v1/events?subject=${encodeURIComponent(first.agent_id)}` });
      assert.deepEqual(history.body.events.map((e: { type: string }) => e.type), ['agent.suspended', 'agent.trust_validated', 'agent.registered']);
      const registrations = await registry.call({ method: 'GET', url: '/v1/events?event_types=agent.registered' });
      assert.deepEqual(registrations.body.events.map((e: { subject: string }) => e.subject), [second.agent_id, first.agent_id]);
      const unknownType = await registry.call({ method: 'GET', url: '/v1/events?event_types=agent.exploded' });
      assert.equal(unknownType.status, 422);
      const badCursor = await registry.call({ method: 'GET', url: '/v1/events?cursor=bm9wZQ' });
      assert.equal(badCursor.status, 422);
      const developer = await createKey(registry, { tier: 'developer' });
      const gated = await registry.call({ method: 'GET', url: '/v1/events', headers: bearer(developer.raw_key) });
      assert.equal(gated.status, 403);
      assert.equal(gated.body.error.code, 'TIER_FEATURE_UNAVAILABLE');
    });

    test('the agent list searches names in any case, literally, or one agent by id, and filters by organisation', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const triage = await registerAgent(registry, { display_name: 'Chest Pain Triage' });
      await registerAgent(registry, { display_name: 'Stroke 100% triage_fast', owner: { org_id: 'org-other' } });
      await registerAgent(registry, { display_name: 'Consent verifier' });
      const names = async (query: string) =>
        (await registry.call({ method: 'GET', url: `/v1/agents?${query}` })).body.agents.map((a: { display_name: string }) => a.display_name);
      assert.deepEqual(await names('q=TRIAGE'), ['Chest Pain Triage', 'Stroke 100% triage_fast']);
      assert.deepEqual(await names(`q=${encodeURIComponent('100%')}`), ['Stroke 100% triage_fast']);
      assert.deepEqual(await names(`q=${encodeURIComponent('%')}`), ['Stroke 100% triage_fast'], '% is a character, not a wildcard');
      assert.deepEqual(await names(`q=${encodeURIComponent('e_f')}`), ['Stroke 100% triage_fast'], '_ is a character, not a wildcard');
      assert.deepEqual(await names(`q=${ulidOf(triage.agent_id)}`), ['Chest Pain Triage']);
      assert.deepEqual(await names(`q=${encodeURIComponent(triage.agent_id)}`), ['Chest Pain Triage']);
      assert.deepEqual(await names('org_id=org-other'), ['Stroke 100% triage_fast']);
      const counted = await registry.call({ method: 'GET', url: '/v1/agents?q=triage&limit=1' });
      assert.equal(counted.body.total_count, 2);
      assert.ok(counted.body.next_cursor);
    });

    test('a status change with a stale If-Match is refused with 412 and changes nothing; a current one or none proceeds', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const agent = await registerAgent(registry);
      const path = `/v1/agents/${ulidOf(agent.agent_id)}`;
      const suspend = (headers: Record<string, string>) =>
        registry.call({ method: 'POST', url: `${path}/suspend`, headers: writeHeaders(headers), payload: { reason: 'review' } });
      await registry.call({ method: 'PUT', url: path, headers: writeHeaders({ 'if-match': '"1"' }), payload: updateBody(agent) });
      const stale = await suspend({ 'if-match': '"1"' });
      assert.equal(stale.status, 412);
      assert.equal(stale.body.error.details.current_etag, '"2"');
      assert.equal((await registry.call({ method: 'GET', url: path })).body.status, 'active');
      const current = await suspend({ 'if-match': '"2"' });
      assert.equal(current.status, 200);
      assert.equal(current.headers.etag, '"3"');
      const reinstated = await registry.call({ method: 'POST', url: `${path}/reinstate`, headers: writeHeaders() });
      assert.equal(reinstated.status, 200, 'If-Match stays optional on status changes');
    });
  });
}

function updateBody(agent: Record<string, any>) {
  const { jurisdiction: _j, ...body } = agentBody({ display_name: agent.display_name });
  return body;
}

describe('instance heartbeat', () => {
  test('a listening registry counts itself among the live instances, and stops counting at close', async (t) => {
    const registry = await buildTestRegistry(t, 'sqlite');
    await registry.app.listen({ port: 0, host: '127.0.0.1' });
    const { body } = await registry.call({ method: 'GET', url: '/v1/admin/diagnostics' });
    assert.equal(body.instances.live, 1);
    assert.match(body.instance_id, /^[0-9a-f-]{36}$/);
    await registry.app.close();
    const leases = await registry.storage.db.selectFrom('leases').selectAll().where('name', 'like', 'instance:%').execute();
    assert.deepEqual(leases, [], 'its lease is released at close');
  });
});
