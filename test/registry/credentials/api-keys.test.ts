import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { KEYS, bearer, createKey } from '../../helpers/keys.ts';
import { BACKENDS, agentBody, buildTestRegistry, ulidOf, writeHeaders } from '../../helpers/registry.ts';

for (const backend of BACKENDS) {
  describe(`API keys [${backend}]`, () => {
    test('creation returns the raw key once; it is stored only as a keyed hash', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const response = await registry.call({ method: 'POST', url: KEYS, payload: { org_id: 'org-a', display_name: 'Vendor integration' } });
      assert.equal(response.status, 201);
      const key = response.body;
      assert.match(key.raw_key, /^rk_[0-9A-Za-z]{43}$/);
      assert.match(key.key_id, /^key_[0-9A-Z]{26}$/);
      assert.equal(response.headers.location, `${KEYS}/${key.key_id}`);
      assert.deepEqual([key.tier, key.scopes, key.org_id, key.active], ['developer', ['registry:read'], 'org-a', true]);
      assert.equal(key.key_prefix, key.raw_key.slice(0, 11));
      const rows = await registry.storage.db.selectFrom('api_keys').selectAll().execute();
      assert.equal(rows.length, 1);
      assert.ok(!JSON.stringify(rows).includes(key.raw_key), 'the raw key is not stored');
      assert.match(rows[0]?.key_hash ?? '', /^[0-9a-f]{64}$/);
      const details = await registry.call({ method: 'GET', url: `${KEYS}/${key.key_id}` });
      assert.equal(details.body.raw_key, undefined);
      assert.ok(!JSON.stringify(details.body).includes(rows[0]?.key_hash ?? 'x'), 'nor is its hash shown');
      const events = await registry.storage.db.selectFrom('events').selectAll().where('type', '=', 'api_key.created').execute();
      assert.equal(events.length, 1);
      assert.ok(!events[0]?.data.includes(key.raw_key));
    });

    test('a replayed creation answers 200 without the raw key', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const request = { method: 'POST' as const, url: KEYS, headers: { 'x-idempotency-key': randomUUID() }, payload: { org_id: 'org-a', display_name: 'k' } };
      const first = await registry.call(request);
      const replay = await registry.call(request);
      assert.equal(first.status, 201);
      assert.equal(replay.status, 200);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.body.key_id, first.body.key_id);
      assert.equal(replay.body.raw_key, undefined);
      assert.ok(!JSON.stringify(await registry.storage.db.selectFrom('idempotency_keys').selectAll().execute()).includes(first.body.raw_key));
    });

    test('a key authenticates with Bearer or X-API-Key and acts with its own scopes, even in disabled mode', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const reader = await createKey(registry, { scopes: ['registry:read'] });
      assert.equal((await registry.call({ method: 'GET', url: '/v1/agents', headers: bearer(reader.raw_key) })).status, 200);
      assert.equal((await registry.call({ method: 'GET', url: '/v1/agents', headers: { 'x-api-key': reader.raw_key } })).status, 200);
      const refused = await registry.call({ method: 'POST', url: '/v1/agents', headers: { ...bearer(reader.raw_key), ...writeHeaders() }, payload: agentBody() });
      assert.equal(refused.status, 403);
      assert.equal(refused.body.error.code, 'INSUFFICIENT_SCOPE');
      assert.deepEqual(refused.body.error.details, { required_scope: 'registry:write' });
      const details = await registry.call({ method: 'GET', url: `${KEYS}/${reader.key_id}` });
      assert.notEqual(details.body.last_used_at, null, 'use is recorded');
    });

    test('unknown, malformed, revoked and expired credentials are 401 with WWW-Authenticate', async (t) => {
      const clock = { at: Date.now(), now() { return new Date(this.at); } };
      const registry = await buildTestRegistry(t, backend, { clock });
      const key = await createKey(registry, { expires_at: new Date(clock.at + 3_600_000).toISOString() });
      for (const headers of [bearer('rk_' + 'A'.repeat(43)), { 'x-api-key': 'not-a-key' }, { authorization: 'Basic abc' }, { authorization: 'Bearer' }, bearer('eyJhbGciOiJIUzI1NiJ9.e30.x')]) {
        const response = await registry.call({ method: 'GET', url: '/v1/agents', headers });
        assert.equal(response.status, 401, JSON.stringify(headers));
        assert.equal(response.body.error.code, 'UNAUTHORIZED');
        assert.match(String(response.headers['www-authenticate']), /^Bearer realm="ward", error="invalid_(token|request)"/);
      }
      assert.equal((await registry.call({ method: 'GET', url: '/v1/agents', headers: bearer(key.raw_key) })).status, 200);
      clock.at += 3_600_001;
      assert.equal((await registry.call({ method: 'GET', url: '/v1/agents', headers: bearer(key.raw_key) })).status, 401, 'expired');
      const other = await createKey(registry);
      assert.equal((await registry.call({ method: 'DELETE', url: `${KEYS}/${other.key_id}` })).status, 204);
      assert.equal((await registry.call({ method: 'GET', url: '/v1/agents', headers: bearer(other.raw_key) })).status, 401, 'revoked, on the very next request');
      assert.equal((await registry.call({ method: 'DELETE', url: `${KEYS}/${other.key_id}` })).status, 204, 'revoking again changes nothing');
      const revokedEvents = await registry.storage.db.selectFrom('events').selectAll().where('type', '=', 'api_key.revoked').execute();
      assert.equal(revokedEvents.length, 1);
      const details = (await registry.call({ method: 'GET', url: `${KEYS}/${other.key_id}` })).body;
      assert.equal(details.active, false);
      assert.notEqual(details.revoked_at, null);
    });

    test('keys are listed by organisation with their prefix, paged', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      for (let i = 0; i < 3; i += 1) await createKey(registry, { org_id: 'org-a', display_name: `a${i}` });
      await createKey(registry, { org_id: 'org-b' });
      const page = await registry.call({ method: 'GET', url: `${KEYS}?org_id=org-a&limit=2` });
      assert.equal(page.body.api_keys.length, 2);
      assert.ok(page.body.api_keys.every((k: { org_id: string; raw_key?: string }) => k.org_id === 'org-a' && k.raw_key === undefined));
      const next = await registry.call({ method: 'GET', url: `${KEYS}?org_id=org-a&limit=2&cursor=${page.body.next_cursor}` });
      assert.equal(next.body.api_keys.length, 1);
      assert.equal(next.body.next_cursor, null);
      assert.equal((await registry.call({ method: 'GET', url: `${KEYS}/key_01J00000000000000000000000` })).status, 404);
    });

    test('bad creation bodies are refused: unknown scope or tier, past expiry, limits outside enterprise', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ scopes: ['registry:everything'] }, '/scopes/0'],
        [{ tier: 'platinum' }, '/tier'],
        [{ expires_at: '2020-01-01T00:00:00.000Z' }, '/expires_at'],
        [{ limits: { requests_per_minute: 10 } }, '/limits'],
        [{ org_id: '' }, '/org_id'],
      ];
      for (const [body, pointer] of cases) {
        const response = await registry.call({ method: 'POST', url: KEYS, payload: { org_id: 'org-a', display_name: 'k', ...body } });
        assert.equal(response.status, 422, pointer);
        assert.ok(response.body.error.details.errors.some((e: { pointer: string }) => e.pointer === pointer), JSON.stringify(response.body));
      }
      const enterprise = await registry.call({ method: 'POST', url: KEYS, payload: { org_id: 'org-a', display_name: 'k', tier: 'enterprise', limits: { requests_per_minute: 20000 } } });
      assert.equal(enterprise.status, 201);
    });

    test('key creation needs registry:admin', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const writer = await createKey(registry, { scopes: ['registry:read', 'registry:write'] });
      const response = await registry.call({ method: 'POST', url: KEYS, headers: bearer(writer.raw_key), payload: { org_id: 'org-a', display_name: 'k' } });
      assert.equal(response.status, 403);
      assert.equal(response.body.error.details.required_scope, 'registry:admin');
      const admin = await createKey(registry, { scopes: ['registry:admin'] });
      assert.equal((await registry.call({ method: 'POST', url: KEYS, headers: bearer(admin.raw_key), payload: { org_id: 'org-b', display_name: 'k' } })).status, 201);
    });

    test("an organisation's key registers for its own organisation, within its tier's agent limit", async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const key = await createKey(registry, { org_id: 'org-a', tier: 'developer', scopes: ['registry:read', 'registry:write'] });
      const headers = () => ({ ...bearer(key.raw_key), ...writeHeaders() });
      const { owner: _owner, ...withoutOwner } = agentBody();
      const own = await registry.call({ method: 'POST', url: '/v1/agents', headers: headers(), payload: withoutOwner });
      assert.equal(own.status, 201);
      assert.equal(own.body.owner.org_id, 'org-a', 'owner.org_id defaults to the key');
      const foreign = await registry.call({ method: 'POST', url: '/v1/agents', headers: headers(), payload: agentBody({ owner: { org_id: 'org-b' } }) });
      assert.equal(foreign.status, 403);
      assert.equal(foreign.body.error.code, 'ORG_MISMATCH');
      for (let i = 1; i < 5; i += 1) {
        assert.equal((await registry.call({ method: 'POST', url: '/v1/agents', headers: headers(), payload: agentBody({ owner: { org_id: 'org-a' } }) })).status, 201);
      }
      const sixth = await registry.call({ method: 'POST', url: '/v1/agents', headers: headers(), payload: agentBody({ owner: { org_id: 'org-a' } }) });
      assert.equal(sixth.status, 403);
      assert.deepEqual([sixth.body.error.code, sixth.body.error.details.max_agents], ['TIER_LIMIT_EXCEEDED', 5]);
      await registry.call({ method: 'POST', url: `/v1/agents/${ulidOf(own.body.agent_id)}/revoke`, headers: headers(), payload: { reason: 'make room' } });
      assert.equal((await registry.call({ method: 'POST', url: '/v1/agents', headers: headers(), payload: agentBody({ owner: { org_id: 'org-a' } }) })).status, 201, 'revoked agents do not count');
    });

    test("an organisation's key cannot change another organisation's agent; an admin can", async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const other = await registry.call({ method: 'POST', url: '/v1/agents', headers: writeHeaders(), payload: agentBody({ owner: { org_id: 'org-b' } }) });
      const key = await createKey(registry, { org_id: 'org-a', scopes: ['registry:read', 'registry:write'] });
      const url = `/v1/agents/${ulidOf(other.body.agent_id)}/suspend`;
      const refused = await registry.call({ method: 'POST', url, headers: { ...bearer(key.raw_key), ...writeHeaders() }, payload: { reason: 'x' } });
      assert.equal(refused.status, 403);
      assert.equal(refused.body.error.code, 'ORG_MISMATCH');
      const admin = await createKey(registry, { org_id: 'registry-ops', scopes: ['registry:write', 'registry:admin'] });
      assert.equal((await registry.call({ method: 'POST', url, headers: { ...bearer(admin.raw_key), ...writeHeaders() }, payload: { reason: 'x' } })).status, 200);
    });

    test('the event stream is refused to developer-tier keys and open to team keys', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const developer = await createKey(registry, { tier: 'developer' });
      const refused = await registry.call({ method: 'GET', url: '/v1/events/stream', headers: bearer(developer.raw_key) });
      assert.equal(refused.status, 403);
      assert.deepEqual(refused.body.error.details, { feature: 'events_sse', tier: 'developer' });
      const team = await createKey(registry, { tier: 'team' });
      const allowed = await registry.app.inject({ method: 'HEAD', url: '/v1/events/stream', headers: bearer(team.raw_key) });
      assert.equal(allowed.statusCode, 200);
    });

    test('the tier table is published exactly as the spec gives it', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const { tiers } = (await registry.call({ method: 'GET', url: '/v1/admin/billing/tiers' })).body;
      assert.deepEqual(
        tiers.map((x: any) => [x.name, x.requests_per_minute, x.requests_per_day, x.max_agents, x.discovery_per_minute, x.routing_per_minute, x.federation, x.events_sse, x.sla]),
        [
          ['developer', 60, 1000, 5, 30, 30, false, false, null],
          ['team', 300, 10000, 25, 100, 100, false, true, '99.5%'],
          ['business', 1000, 100000, 100, 500, 500, true, true, '99.9%'],
          ['scale', 5000, 1000000, 500, 2000, 2000, true, true, '99.95%'],
          ['enterprise', null, null, null, null, null, true, true, '99.99%'],
        ],
      );
    });
  });
}
