/**
 * The FHIR directory (issue 32) as an outside FHIR client sees it: fhir-kit-client reads the
 * CapabilityStatement, searches, follows `next` to the end; Medplum's R4 validator checks every
 * resource; the unhappy paths answer OperationOutcomes. Both backends.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { Client } from 'fhir-kit-client';
import { BACKENDS, agentBody, ulidOf } from '../../helpers/registry.ts';
import { startRegistries, testScope } from '../../helpers/listening.ts';
import { fhirIssues } from '../../helpers/fhir-validation.ts';
import { runWard } from '../../helpers/ward-process.ts';

const ORGS = [
  { org_id: 'org-leeds-th', org_name: 'Leeds Teaching Hospitals' },
  { org_id: 'nhs:org_rr8', org_name: 'Example NHS Trust' },
  { org_id: 'vendor-a', org_name: 'Vendor A Ltd' },
];

const PROTOCOL_SETS = [['mesh-a2a-jsonrpc'], ['fhir-rest', 'mesh-a2a-jsonrpc'], ['hl7v2-mllp']];

async function register(baseUrl: string, index: number) {
  const protocols = PROTOCOL_SETS[index % PROTOCOL_SETS.length] as string[];
  const body = agentBody({
    display_name: `Agent ${String(index).padStart(2, '0')}`,
    endpoints: protocols.map((protocol, at) => ({ url: protocol === 'hl7v2-mllp' ? `mllp://mllp-${index}.agents.example.org:2575` : `https://agents.example.org/${index}/${protocol}`, protocol, priority: 10 + at, weight: 1 })),
    capabilities: { protocols, skills: ['triage.assess'], features: [], fhir_r4: protocols.includes('fhir-rest') },
    owner: { ...ORGS[index % ORGS.length], operator: 'ops@example.org' },
  });
  const response = await fetch(`${baseUrl}/v1/agents`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-idempotency-key': randomUUID() }, body: JSON.stringify(body) });
  assert.equal(response.status, 201, await response.clone().text());
  return (await response.json()) as { agent_id: string; endpoints: unknown[] };
}

async function getFhir(url: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, { headers });
  return { status: response.status, type: response.headers.get('content-type'), headers: response.headers, body: (await response.json()) as any };
}

/** Every resource of a search, following `next` links to the end with the outside client. */
async function searchAll(client: any, resourceType: string, searchParams: Record<string, string>) {
  const resources: any[] = [];
  let bundle = await client.search({ resourceType, searchParams });
  for (let pages = 0; bundle; pages += 1) {
    assert.ok(pages < 100, 'the next links never end');
    assert.deepEqual(fhirIssues(bundle), []);
    resources.push(...(bundle.entry ?? []).map((entry: any) => entry.resource));
    bundle = bundle.link?.some((link: any) => link.relation === 'next') ? await client.nextPage({ bundle }) : undefined;
  }
  return resources;
}

for (const backend of BACKENDS) {
  describe(`FHIR directory (${backend})`, () => {
    test('an outside FHIR client reads the CapabilityStatement, searches and pages to the end, every agent once', async (t) => {
      const [registry] = await startRegistries(testScope(t), backend);
      const baseUrl = (registry as { baseUrl: string }).baseUrl;
      const agents = [];
      for (let index = 0; index < 13; index += 1) agents.push(await register(baseUrl, index));
      const endpointCount = agents.reduce((sum, agent) => sum + agent.endpoints.length, 0);
      const client = new Client({ baseUrl: `${baseUrl}/fhir` });

      const capabilities: any = await client.capabilityStatement();
      assert.equal(capabilities.resourceType, 'CapabilityStatement');
      assert.equal(capabilities.fhirVersion, '4.0.1');
      assert.deepEqual(fhirIssues(capabilities), []);
      assert.deepEqual(capabilities.rest[0].resource.map((resource: any) => resource.type), ['Device', 'Endpoint', 'Organization', 'Provenance']);

      const devices = await searchAll(client, 'Device', { _count: '4' });
      assert.equal(devices.length, 13);
      assert.deepEqual(new Set(devices.map((device) => device.identifier[0].value)), new Set(agents.map((agent) => agent.agent_id)));

      const endpoints = await searchAll(client, 'Endpoint', { _count: '3' });
      assert.equal(endpoints.length, endpointCount);
      assert.equal(new Set(endpoints.map((endpoint) => endpoint.id)).size, endpointCount, 'an endpoint was shown twice');

      const organizations = await searchAll(client, 'Organization', { _count: '2' });
      assert.deepEqual(organizations.map((organization) => organization.name).sort(), ORGS.map((org) => org.org_name).sort());

      // Connection types, coded with HL7's codes where HL7 has one.
      const fhirRest = await searchAll(client, 'Endpoint', { 'connection-type': 'http://terminology.hl7.org/CodeSystem/endpoint-connection-type|hl7-fhir-rest' });
      assert.equal(fhirRest.length, agents.filter((_, index) => index % 3 === 1).length);
      assert.ok(fhirRest.every((endpoint) => endpoint.address.endsWith('/fhir-rest')));
      const mesh = await searchAll(client, 'Endpoint', { 'connection-type': 'mesh-a2a-jsonrpc', _count: '2' });
      assert.equal(mesh.length, agents.filter((_, index) => index % 3 !== 2).length);

      // The owner's endpoints and devices, by a reference to the Organization; the org id escapes ':' and '_'.
      const trust = organizations.find((organization) => organization.identifier[0].value === 'nhs:org_rr8');
      assert.equal(trust.id, 'nhs-corg-urr8');
      const trustDevices = await searchAll(client, 'Device', { organization: `Organization/${trust.id}` });
      assert.equal(trustDevices.length, agents.filter((_, index) => index % 3 === 1).length);
      assert.ok(trustDevices.every((device) => device.owner.reference === `Organization/${trust.id}`));
      const read: any = await client.read({ resourceType: 'Organization', id: trust.id });
      assert.equal(read.name, 'Example NHS Trust');

      // The owners of a page, each once, with _include.
      const withOwners = await getFhir(`${baseUrl}/fhir/Endpoint?_include=Endpoint:organization&_count=4`);
      assert.deepEqual(fhirIssues(withOwners.body), []);
      const matched = withOwners.body.entry.filter((entry: any) => entry.search.mode === 'match');
      const includedOwners = withOwners.body.entry.filter((entry: any) => entry.search.mode === 'include').map((entry: any) => `Organization/${entry.resource.id}`);
      assert.equal(matched.length, 4);
      assert.deepEqual(new Set(includedOwners), new Set(matched.map((entry: any) => entry.resource.managingOrganization.reference)));
      assert.equal(includedOwners.length, new Set(includedOwners).size);

      // _revinclude: each Organization of the page with its endpoints, which reference it.
      const withEndpoints = await getFhir(`${baseUrl}/fhir/Organization?_revinclude=Endpoint:organization&_count=2`);
      assert.deepEqual(fhirIssues(withEndpoints.body), []);
      const pageOrgs = withEndpoints.body.entry.filter((entry: any) => entry.search.mode === 'match').map((entry: any) => `Organization/${entry.resource.id}`);
      const revincluded = withEndpoints.body.entry.filter((entry: any) => entry.search.mode === 'include').map((entry: any) => entry.resource);
      assert.equal(pageOrgs.length, 2);
      assert.ok(revincluded.every((endpoint: any) => endpoint.resourceType === 'Endpoint' && pageOrgs.includes(endpoint.managingOrganization.reference)));
      assert.equal(revincluded.length, endpoints.filter((endpoint) => pageOrgs.includes(endpoint.managingOrganization.reference)).length);
      assert.ok(withEndpoints.body.link[0].url.includes('_revinclude=Endpoint%3Aorganization'));
      assert.deepEqual(capabilities.rest[0].resource.find((resource: any) => resource.type === 'Organization').searchRevInclude, ['Endpoint:organization']);

      // Capability search the FHIR way: ranked as discovery ranks.
      const discovered = await getFhir(`${baseUrl}/v1/discover?capability=triage.assess&limit=100`);
      const bySkill = await searchAll(client, 'Device', { skill: 'triage.assess', _count: '5' });
      assert.ok(bySkill.length > 0);
      assert.deepEqual(bySkill.map((device) => device.identifier[0].value), discovered.body.results.map((result: any) => result.agent_id));
      assert.equal((await getFhir(`${baseUrl}/fhir/Device?skill=no.such.skill`)).body.entry, undefined);

      // When the record last changed.
      assert.equal((await searchAll(client, 'Device', { _lastUpdated: `ge${new Date(Date.now() - 3_600_000).toISOString()}` })).length, 13);
      assert.equal((await searchAll(client, 'Device', { _lastUpdated: 'lt2000' })).length, 0);
      assert.equal((await searchAll(client, 'Endpoint', { _lastUpdated: `eq${new Date().toISOString().slice(0, 10)}` })).length, endpointCount);

      // Totals: exact where the store counts, and _summary=count.
      const counted = await getFhir(`${baseUrl}/fhir/Device?_summary=count`);
      assert.equal(counted.body.total, 13);
      assert.equal(counted.body.entry, undefined);
      const endpointTotal = await getFhir(`${baseUrl}/fhir/Endpoint?_summary=count&connection-type=hl7v2-mllp`);
      assert.equal(endpointTotal.body.total, agents.filter((_, index) => index % 3 === 2).length);
    });

    test('suspending or revoking an agent changes its Endpoint status on the next search; reads carry ETag and Last-Modified', async (t) => {
      const [registry] = await startRegistries(testScope(t), backend);
      const baseUrl = (registry as { baseUrl: string }).baseUrl;
      const agent = await register(baseUrl, 1);
      const ulid = ulidOf(agent.agent_id);
      const before = await getFhir(`${baseUrl}/fhir/Endpoint?identifier=${encodeURIComponent(agent.agent_id)}`);
      assert.deepEqual(before.body.entry.map((entry: any) => entry.resource.status), ['active', 'active']);

      const suspend = await fetch(`${baseUrl}/v1/agents/${ulid}/suspend`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-idempotency-key': randomUUID() }, body: JSON.stringify({ reason: 'review' }) });
      assert.equal(suspend.status, 200, await suspend.clone().text());
      const suspended = await getFhir(`${baseUrl}/fhir/Endpoint?status=suspended`);
      assert.equal(suspended.body.entry.length, 2);
      const device = await getFhir(`${baseUrl}/fhir/Device/${ulid}`);
      assert.equal(device.status, 200);
      assert.equal(device.type, 'application/fhir+json; charset=utf-8');
      assert.equal(device.body.status, 'inactive');
      assert.equal(device.headers.get('etag'), `W/"${device.body.meta.versionId}"`);
      assert.ok(device.headers.get('last-modified'));
      assert.deepEqual(fhirIssues(device.body), []);

      const revoke = await fetch(`${baseUrl}/v1/agents/${ulid}/revoke`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-idempotency-key': randomUUID() }, body: JSON.stringify({ reason: 'compromised' }) });
      assert.equal(revoke.status, 200, await revoke.clone().text());
      const off = await getFhir(`${baseUrl}/fhir/Endpoint?status=off&_count=1`);
      assert.equal(off.body.entry.length, 1);
      const endpoint = await getFhir(`${baseUrl}/fhir/Endpoint/${off.body.entry[0].resource.id}`);
      assert.equal(endpoint.body.status, 'off');
      assert.deepEqual(fhirIssues(endpoint.body), []);

      // Its history as Provenance from the ledger: each change with the leaf an outside auditor checks.
      const client = new Client({ baseUrl: `${baseUrl}/fhir` });
      const history = await searchAll(client, 'Provenance', { target: `Device/${ulid}`, _count: '2' });
      const operations = history.map((provenance) => provenance.activity.coding[1].code);
      assert.equal(operations[0], 'agent.registered');
      assert.deepEqual(operations.slice(-2), ['agent.suspended', 'agent.revoked']);
      assert.deepEqual(history.slice(-2).map((provenance) => provenance.activity.coding[0].code), ['SUSPEND', 'NULLIFY']);
      assert.ok(history.every((provenance) => provenance.target[0].reference === `Device/${ulid}`));
      const revokedAt = history.at(-1);
      const leaf = revokedAt.entity[0].what.identifier.value;
      assert.equal(revokedAt.entity[0].what.identifier.system, `${baseUrl}/v1/transparency/entries`);
      const reread = await getFhir(`${baseUrl}/fhir/Provenance/${revokedAt.id}`);
      assert.equal(reread.status, 200);
      assert.deepEqual(fhirIssues(reread.body), []);
      const verified = await runWard(t, ['ledger', 'verify', '--url', baseUrl, '--leaf', leaf]);
      assert.equal(verified.code, 0, verified.stderr + verified.stdout);
      const other = await getFhir(`${baseUrl}/fhir/Provenance?target=Device/01ARZ3NDEKTSV4RRFFQ69G5FAV`);
      assert.equal(other.body.total, 0);
      const untargeted = await getFhir(`${baseUrl}/fhir/Provenance`);
      assert.equal(untargeted.status, 400);
    });

    test('every bad request is an OperationOutcome with the Ward code: XML, unknown parameters when strict, bad values, unknown ids and paths, PHI', async (t) => {
      const [registry] = await startRegistries(testScope(t), backend);
      const baseUrl = (registry as { baseUrl: string }).baseUrl;
      await register(baseUrl, 0);
      const cases: Array<[string, Record<string, string>, number, string]> = [
        ['/fhir/Device?_format=xml', {}, 406, 'NOT_ACCEPTABLE'],
        ['/fhir/metadata', { accept: 'application/fhir+xml' }, 406, 'NOT_ACCEPTABLE'],
        ['/fhir/Device?colour=blue', { prefer: 'handling=strict' }, 400, 'BAD_REQUEST'],
        ['/fhir/Device?_count=0', {}, 400, 'BAD_REQUEST'],
        ['/fhir/Device?_count=101', {}, 400, 'BAD_REQUEST'],
        ['/fhir/Device?_page_token=nonsense', {}, 400, 'BAD_REQUEST'],
        // A token as the server writes them, but one it never wrote: it would have a page read a billion rows.
        [`/fhir/Device?_page_token=${Buffer.from('fhir-Device:[null,1000000000,0]').toString('base64url')}`, {}, 400, 'BAD_REQUEST'],
        [`/fhir/Device?skill=triage.assess&_page_token=${Buffer.from('fhir-Device:["-5",0,0]').toString('base64url')}`, {}, 400, 'BAD_REQUEST'],
        [`/fhir/Endpoint?_page_token=${Buffer.from('fhir-Endpoint:["not-an-agent-id",0,0]').toString('base64url')}`, {}, 400, 'BAD_REQUEST'],
        ['/fhir/Device?device-name:exact=Agent', {}, 400, 'BAD_REQUEST'],
        ['/fhir/Device/01ARZ3NDEKTSV4RRFFQ69G5FAV', {}, 404, 'RESOURCE_NOT_FOUND'],
        ['/fhir/Endpoint/not-an-id', {}, 404, 'RESOURCE_NOT_FOUND'],
        ['/fhir/Organization/-0000000000000000000000000000000000000000', {}, 404, 'RESOURCE_NOT_FOUND'],
        ['/fhir/Patient', {}, 404, 'ROUTE_NOT_FOUND'],
        ['/fhir/Device?device-name=943%20476%205919', {}, 422, 'PHI_DETECTED'],
        ['/fhir/Device?_lastUpdated=yesterday', {}, 400, 'BAD_REQUEST'],
        ['/fhir/Device?_lastUpdated=ge2026-01-01T10:00', {}, 400, 'BAD_REQUEST'],
        ['/fhir/Device?_include=Device:patient', { prefer: 'handling=strict' }, 400, 'BAD_REQUEST'],
        ['/fhir/Endpoint?_revinclude=Provenance:target', { prefer: 'handling=strict' }, 400, 'BAD_REQUEST'],
      ];
      for (const [path, headers, status, code] of cases) {
        const answer = await getFhir(`${baseUrl}${path}`, headers);
        assert.equal(answer.status, status, `${path}: ${JSON.stringify(answer.body)}`);
        assert.equal(answer.type, 'application/fhir+json; charset=utf-8', path);
        assert.equal(answer.body.resourceType, 'OperationOutcome', path);
        assert.equal(answer.body.issue[0].details.coding[0].code, code, path);
        assert.deepEqual(fhirIssues(answer.body), [], path);
      }
      // Lenient handling (the default) ignores what it does not know, and the self link says what was used.
      const lenient = await getFhir(`${baseUrl}/fhir/Device?colour=blue&_count=5`);
      assert.equal(lenient.status, 200);
      assert.equal(lenient.body.total, 1);
      assert.equal(new URL(lenient.body.link[0].url).search, '?_count=5');
    });

    test('the CapabilityStatement needs no credential; searches need registry:read', async (t) => {
      const [registry] = await startRegistries(testScope(t), backend, { env: { REGISTRY_AUTH_MODE: 'jwt', REGISTRY_JWT_JWKS_URI: 'http://127.0.0.1:9/jwks.json', REGISTRY_JWT_ISSUER: 'https://issuer.example', REGISTRY_JWT_AUDIENCE: 'ward' } });
      const baseUrl = (registry as { baseUrl: string }).baseUrl;
      const metadata = await getFhir(`${baseUrl}/fhir/metadata`);
      assert.equal(metadata.status, 200);
      const refused = await getFhir(`${baseUrl}/fhir/Device`);
      assert.equal(refused.status, 401);
      assert.equal(refused.body.resourceType, 'OperationOutcome');
      assert.equal(refused.body.issue[0].code, 'login');
      assert.ok(refused.headers.get('www-authenticate'));
    });
  });
}
