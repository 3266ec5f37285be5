/**
 * `Device/{id}/_history` and `vread` (issue 32): every version of an agent's record as the FHIR
 * directory answers it, read by an outside FHIR client (fhir-kit-client) and checked by Medplum's R4
 * validator; the version table written with each agent write (migration 014) and its backfill; the
 * endpoint index (migration 015) after an update; a `_revinclude` cut at its bound. Both backends.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { Client } from 'fhir-kit-client';
import { migrateToLatest } from '../../../src/registry/storage/migrator.ts';
import { MIGRATIONS } from '../../../src/registry/storage/migrations/index.ts';
import { BACKENDS, agentBody, openTestStorage, ulidOf } from '../../helpers/registry.ts';
import { startRegistries, testScope } from '../../helpers/listening.ts';
import { fhirIssues } from '../../helpers/fhir-validation.ts';

const write = (baseUrl: string, method: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${baseUrl}${path}`, { method, headers: { 'content-type': 'application/json', 'x-idempotency-key': randomUUID(), ...headers }, body: JSON.stringify(body) });

async function getFhir(url: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, { headers });
  return { status: response.status, headers: response.headers, body: (await response.json()) as any };
}

for (const backend of BACKENDS) {
  describe(`FHIR Device history and vread (${backend})`, () => {
    test('each write is a version: history newest first, vread of each, ETag and Last-Modified, the CapabilityStatement says so', async (t) => {
      const [registry] = await startRegistries(testScope(t), backend);
      const baseUrl = (registry as { baseUrl: string }).baseUrl;
      const body = agentBody({ display_name: 'History agent', owner: { org_id: 'org-history', org_name: 'History Trust' } });
      const created = await write(baseUrl, 'POST', '/v1/agents', body);
      assert.equal(created.status, 201, await created.clone().text());
      const agent = (await created.json()) as any;
      const ulid = ulidOf(agent.agent_id);
      const { jurisdiction: _jurisdiction, ...writable } = body;
      const moved = [{ url: 'https://agents.example.org/history/fhir', protocol: 'fhir-rest', priority: 10 }];
      const renamed = await write(baseUrl, 'PUT', `/v1/agents/${ulid}`, { ...writable, display_name: 'History agent renamed', endpoints: moved }, { 'if-match': '"1"' });
      assert.equal(renamed.status, 200, await renamed.clone().text());
      const suspended = await write(baseUrl, 'POST', `/v1/agents/${ulid}/suspend`, { reason: 'review' });
      assert.equal(suspended.status, 200, await suspended.clone().text());
      // Another agent's writes are not in this one's history.
      assert.equal((await write(baseUrl, 'POST', '/v1/agents', agentBody({ display_name: 'Bystander' }))).status, 201);

      // The endpoint index follows the update: the agent is found by its new connection type only.
      const addressesOf = async (type: string) => ((await getFhir(`${baseUrl}/fhir/Endpoint?connection-type=${type}`)).body.entry ?? []).map((entry: any) => entry.resource.address);
      assert.deepEqual(await addressesOf('hl7-fhir-rest'), ['https://agents.example.org/history/fhir']);
      assert.ok(!(await addressesOf('mesh-a2a-jsonrpc')).includes('https://agents.example.org/history/fhir'));
      assert.equal((await addressesOf('mesh-a2a-jsonrpc')).length, 1, 'the bystander alone');

      const client = new Client({ baseUrl: `${baseUrl}/fhir` });
      const history: any = await client.history({ resourceType: 'Device', id: ulid });
      assert.equal(history.resourceType, 'Bundle');
      assert.equal(history.type, 'history');
      assert.equal(history.total, 3);
      assert.deepEqual(fhirIssues(history), []);
      const versions = history.entry.map((entry: any) => entry.resource);
      assert.deepEqual(versions.map((device: any) => device.meta.versionId), ['3', '2', '1']);
      assert.deepEqual(versions.map((device: any) => device.deviceName[0].name), ['History agent renamed', 'History agent renamed', 'History agent']);
      assert.deepEqual(versions.map((device: any) => device.status), ['inactive', 'active', 'active']);
      assert.deepEqual(history.entry.map((entry: any) => entry.request.method), ['PUT', 'PUT', 'POST']);
      assert.deepEqual(history.entry.map((entry: any) => entry.response.etag), ['W/"3"', 'W/"2"', 'W/"1"']);
      assert.ok(history.entry.every((entry: any) => entry.fullUrl === `${baseUrl}/fhir/Device/${ulid}`));

      // The current read and the newest version agree; each version reads back alone, with its own headers.
      const current = await getFhir(`${baseUrl}/fhir/Device/${ulid}`);
      assert.deepEqual(current.body, versions[0]);
      for (const version of versions) {
        const vread: any = await client.vread({ resourceType: 'Device', id: ulid, version: version.meta.versionId });
        assert.deepEqual(vread, version);
        const raw = await getFhir(`${baseUrl}/fhir/Device/${ulid}/_history/${version.meta.versionId}`);
        assert.equal(raw.headers.get('etag'), `W/"${version.meta.versionId}"`);
        assert.equal(raw.headers.get('last-modified'), new Date(version.meta.lastUpdated).toUTCString());
        assert.deepEqual(fhirIssues(raw.body), []);
      }

      // Paging newest first with next links to the end, and _since.
      const paged = [];
      let page = await getFhir(`${baseUrl}/fhir/Device/${ulid}/_history?_count=2`);
      for (;;) {
        assert.deepEqual(fhirIssues(page.body), []);
        paged.push(...page.body.entry.map((entry: any) => entry.resource.meta.versionId));
        const next = page.body.link.find((link: any) => link.relation === 'next');
        if (!next) break;
        page = await getFhir(next.url);
      }
      assert.deepEqual(paged, ['3', '2', '1']);
      const since = await getFhir(`${baseUrl}/fhir/Device/${ulid}/_history?_since=${encodeURIComponent(versions[1].meta.lastUpdated)}`);
      assert.deepEqual(since.body.entry.map((entry: any) => entry.resource.meta.versionId), ['3', '2']);
      assert.equal(since.body.total, undefined);
      const future = await getFhir(`${baseUrl}/fhir/Device/${ulid}/_history?_since=2999-01-01T00:00:00Z`);
      assert.equal(future.body.entry, undefined);
      assert.deepEqual(fhirIssues(future.body), []);

      const capabilities: any = await client.capabilityStatement();
      const byType = Object.fromEntries(capabilities.rest[0].resource.map((resource: any) => [resource.type, resource]));
      assert.deepEqual(byType.Device.interaction.map((interaction: any) => interaction.code), ['read', 'vread', 'history-instance', 'search-type']);
      assert.equal(byType.Device.readHistory, true);
      for (const type of ['Endpoint', 'Organization', 'Provenance']) {
        assert.deepEqual(byType[type].interaction.map((interaction: any) => interaction.code), ['read', 'search-type'], type);
        assert.equal(byType[type].readHistory, false, type);
      }
      assert.deepEqual(fhirIssues(capabilities), []);
    });

    test('unknown ids and versions, bad parameters and foreign page tokens are OperationOutcomes', async (t) => {
      const [registry] = await startRegistries(testScope(t), backend);
      const baseUrl = (registry as { baseUrl: string }).baseUrl;
      const created = await write(baseUrl, 'POST', '/v1/agents', agentBody());
      const ulid = ulidOf(((await created.json()) as any).agent_id);
      const searchToken = Buffer.from('fhir-Device:[null,0,0]').toString('base64url');
      const cases: Array<[string, Record<string, string>, number, string]> = [
        [`/fhir/Device/${ulid}/_history/2`, {}, 404, 'RESOURCE_NOT_FOUND'],
        [`/fhir/Device/${ulid}/_history/0`, {}, 404, 'RESOURCE_NOT_FOUND'],
        [`/fhir/Device/${ulid}/_history/one`, {}, 404, 'RESOURCE_NOT_FOUND'],
        ['/fhir/Device/01ARZ3NDEKTSV4RRFFQ69G5FAV/_history', {}, 404, 'RESOURCE_NOT_FOUND'],
        ['/fhir/Device/01ARZ3NDEKTSV4RRFFQ69G5FAV/_history/1', {}, 404, 'RESOURCE_NOT_FOUND'],
        ['/fhir/Device/not-a-ulid/_history', {}, 404, 'RESOURCE_NOT_FOUND'],
        [`/fhir/Device/${ulid}/_history?_count=0`, {}, 400, 'BAD_REQUEST'],
        [`/fhir/Device/${ulid}/_history?_since=yesterday`, {}, 400, 'BAD_REQUEST'],
        [`/fhir/Device/${ulid}/_history?_since=2026-01-01T10:00:00`, {}, 400, 'BAD_REQUEST'],
        [`/fhir/Device/${ulid}/_history?_page_token=${searchToken}`, {}, 400, 'BAD_REQUEST'],
        [`/fhir/Device/${ulid}/_history?_at=2026`, { prefer: 'handling=strict' }, 400, 'BAD_REQUEST'],
        [`/fhir/Device/${ulid}/_history?_format=xml`, {}, 406, 'NOT_ACCEPTABLE'],
        [`/fhir/Endpoint/${ulid}/_history`, {}, 404, 'ROUTE_NOT_FOUND'],
      ];
      for (const [path, headers, status, code] of cases) {
        const answer = await getFhir(`${baseUrl}${path}`, headers);
        assert.equal(answer.status, status, `${path}: ${JSON.stringify(answer.body)}`);
        assert.equal(answer.body.resourceType, 'OperationOutcome', path);
        assert.equal(answer.body.issue[0].details.coding[0].code, code, path);
        assert.deepEqual(fhirIssues(answer.body), [], path);
      }
      // Lenient handling ignores an unknown parameter and leaves it out of the self link.
      const lenient = await getFhir(`${baseUrl}/fhir/Device/${ulid}/_history?_at=2026&_count=5`);
      assert.equal(lenient.status, 200);
      assert.equal(new URL(lenient.body.link[0].url).search, '?_count=5');
    });

    test('migrations 014 and 015 backfill the current version and the endpoint protocols of each agent written before them', async (t) => {
      const storage = await openTestStorage(t, backend);
      const before = Object.fromEntries(Object.entries(MIGRATIONS).filter(([name]) => name < '014'));
      await migrateToLatest(storage, before);
      const at = '2026-01-02T03:04:05.000Z';
      const protocolsOf: Record<string, string[]> = { '01ARZ3NDEKTSV4RRFFQ69G5FAV': ['mesh-a2a-jsonrpc', 'fhir-rest', 'mesh-a2a-jsonrpc'], '01ARZ3NDEKTSV4RRFFQ69G5FAW': ['hl7v2-mllp'] };
      const recordOf = (id: string) => ({ display_name: `Agent ${id}`, endpoints: (protocolsOf[id] ?? []).map((protocol, n) => ({ url: `https://a.example.org/${n}`, protocol })) });
      for (const [id, version, status] of [['01ARZ3NDEKTSV4RRFFQ69G5FAV', 4, 'suspended'], ['01ARZ3NDEKTSV4RRFFQ69G5FAW', 1, 'active']] as const) {
        await sql`insert into agents (id, agent_uri, jurisdiction, status, display_name, org_id, version, trust_state, trust_level, record, created_at, updated_at)
                  values (${id}, ${`registry://gb/agents/${id}`}, 'GB', ${status}, ${`Agent ${id}`}, 'org-a', ${version}, 'validated', 2, ${JSON.stringify(recordOf(id))}, ${at}, ${at})`.execute(storage.db);
      }
      const applied = await migrateToLatest(storage);
      assert.deepEqual(applied.slice(0, 2), ['014-agent-versions', '015-agent-endpoints'], 'the two run next, before any later migration');
      // Migration 015: the protocols of each agent's endpoints, once each.
      const endpoints = await sql<any>`select protocol, agent_id from agent_endpoints order by agent_id, protocol`.execute(storage.db);
      assert.deepEqual(endpoints.rows.map((row) => ({ ...row })), [
        { protocol: 'fhir-rest', agent_id: '01ARZ3NDEKTSV4RRFFQ69G5FAV' },
        { protocol: 'mesh-a2a-jsonrpc', agent_id: '01ARZ3NDEKTSV4RRFFQ69G5FAV' },
        { protocol: 'hl7v2-mllp', agent_id: '01ARZ3NDEKTSV4RRFFQ69G5FAW' },
      ]);
      const rows = await sql<any>`select agent_id, version, status, record, updated_at from agent_versions order by agent_id`.execute(storage.db);
      assert.deepEqual(
        rows.rows.map((row) => ({ ...row, version: Number(row.version) })),
        [
          { agent_id: '01ARZ3NDEKTSV4RRFFQ69G5FAV', version: 4, status: 'suspended', record: JSON.stringify(recordOf('01ARZ3NDEKTSV4RRFFQ69G5FAV')), updated_at: at },
          { agent_id: '01ARZ3NDEKTSV4RRFFQ69G5FAW', version: 1, status: 'active', record: JSON.stringify(recordOf('01ARZ3NDEKTSV4RRFFQ69G5FAW')), updated_at: at },
        ],
      );
    });

    test('migration 018 (contract) adds the versions and endpoint rows an older build left out during a rolling upgrade, and keeps what is there', async (t) => {
      const storage = await openTestStorage(t, backend);
      const before = Object.fromEntries(Object.entries(MIGRATIONS).filter(([name]) => name < '018'));
      await migrateToLatest(storage, before);
      assert.equal(MIGRATIONS['018-fhir-index-catch-up']?.phase, 'contract', 'it runs once no older build is alive');
      const at = '2026-02-03T04:05:06.000Z';
      // Written as an older build writes: the agent row only, at version 3, with no versions or endpoint rows.
      const id = '01ARZ3NDEKTSV4RRFFQ69G5FAX';
      const record = { display_name: 'Written by the old build', endpoints: [{ url: 'https://a.example.org/0', protocol: 'hl7v2-mllp' }, { url: 'https://a.example.org/1', protocol: 'fhir-rest' }] };
      await sql`insert into agents (id, agent_uri, jurisdiction, status, display_name, org_id, version, trust_state, trust_level, record, created_at, updated_at)
                values (${id}, ${`registry://gb/agents/${id}`}, 'GB', 'active', 'Written by the old build', 'org-a', 3, 'validated', 2, ${JSON.stringify(record)}, ${at}, ${at})`.execute(storage.db);
      // What this build had already written for it survives (an earlier version, one protocol).
      await sql`insert into agent_versions (agent_id, version, status, record, updated_at) values (${id}, 2, 'active', '{}', ${at})`.execute(storage.db);
      await sql`insert into agent_endpoints (protocol, agent_id) values ('fhir-rest', ${id})`.execute(storage.db);

      const through018 = Object.fromEntries(Object.entries(MIGRATIONS).filter(([name]) => name <= '018-fhir-index-catch-up'));
      assert.deepEqual(await migrateToLatest(storage, through018), ['018-fhir-index-catch-up'], 'alone, it contracts at start');
      const versions = await sql<any>`select version, record from agent_versions where agent_id = ${id} order by version`.execute(storage.db);
      assert.deepEqual(versions.rows.map((row) => [Number(row.version), row.record]), [[2, '{}'], [3, JSON.stringify(record)]]);
      const endpoints = await sql<any>`select protocol from agent_endpoints where agent_id = ${id} order by protocol`.execute(storage.db);
      assert.deepEqual(endpoints.rows.map((row) => row.protocol), ['fhir-rest', 'hl7v2-mllp']);
    });
  });
}

for (const backend of BACKENDS) test(`an Organization with more endpoints than a page includes says so in an outcome entry (${backend})`, async (t) => {
  const [registry] = await startRegistries(testScope(t), backend);
  const baseUrl = (registry as { baseUrl: string }).baseUrl;
  // 21 agents of five endpoints each: 105 endpoints, past the 100 included.
  for (let n = 0; n < 21; n += 1) {
    const endpoints = Array.from({ length: 5 }, (_, e) => ({ url: `https://agents.example.org/big/${n}/${e}`, protocol: 'mesh-a2a-jsonrpc', priority: 10 + e }));
    const created = await write(baseUrl, 'POST', '/v1/agents', agentBody({ display_name: `Big ${n}`, endpoints, owner: { org_id: 'org-big', org_name: 'Big Trust' } }));
    assert.equal(created.status, 201, await created.clone().text());
  }
  const answer = await getFhir(`${baseUrl}/fhir/Organization?_revinclude=Endpoint:organization`);
  assert.deepEqual(fhirIssues(answer.body), []);
  assert.equal(answer.body.entry.filter((entry: any) => entry.search.mode === 'include').length, 100);
  const outcome = answer.body.entry.find((entry: any) => entry.search.mode === 'outcome');
  assert.equal(outcome.resource.issue[0].code, 'incomplete');
  assert.match(outcome.resource.issue[0].diagnostics, /Endpoint\?organization=Organization\/org--big/);
});
