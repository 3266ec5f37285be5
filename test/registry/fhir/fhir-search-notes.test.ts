/**
 * What a FHIR search says beside its matches (issue 46): an `organization` that names no Organization
 * here is answered with an OperationOutcome warning entry (with the escaped spelling when the id was
 * written as the raw org_id), not a silent empty Bundle; Endpoint searches give `total` as Device
 * searches do, counted from the agents' endpoints, and any search whose first page is the whole
 * answer gives it. Answers pass Medplum's R4 validator. Both backends.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { BACKENDS, agentBody } from '../../helpers/registry.ts';
import { startRegistries, testScope } from '../../helpers/listening.ts';
import { fhirIssues } from '../../helpers/fhir-validation.ts';

const register = (baseUrl: string, body: unknown) =>
  fetch(`${baseUrl}/v1/agents`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-idempotency-key': randomUUID() }, body: JSON.stringify(body) });

async function bundle(url: string) {
  const response = await fetch(url);
  assert.equal(response.status, 200, url);
  return (await response.json()) as any;
}

const outcomes = (answer: any) => (answer.entry ?? []).filter((entry: any) => entry.search.mode === 'outcome');

for (const backend of BACKENDS) {
  describe(`FHIR search notes (${backend})`, () => {
    test('an unknown or unescaped organization is a warning entry; a known one is none', async (t) => {
      const [registry] = await startRegistries(testScope(t), backend);
      const baseUrl = (registry as { baseUrl: string }).baseUrl;
      const owner = { org_id: 'org-notes_a', org_name: 'Notes Trust' };
      const endpoints = [
        { url: 'https://notes.example.org/a2a', protocol: 'mesh-a2a-jsonrpc', priority: 10 },
        { url: 'https://notes.example.org/fhir', protocol: 'fhir-rest', priority: 20 },
      ];
      assert.equal((await register(baseUrl, agentBody({ display_name: 'Notes one', owner, endpoints }))).status, 201);
      assert.equal((await register(baseUrl, agentBody({ display_name: 'Notes two', owner }))).status, 201);

      // The escaped id finds them, with no outcome entry.
      const known = await bundle(`${baseUrl}/fhir/Device?organization=Organization/org--notes-ua`);
      assert.equal(known.total, 2);
      assert.deepEqual(outcomes(known), []);

      // The raw org_id: nothing matches, and the warning gives the spelling that would.
      for (const type of ['Device', 'Endpoint']) {
        const raw = await bundle(`${baseUrl}/fhir/${type}?organization=Organization/org-notes_a`);
        assert.equal(raw.total, 0, type);
        const [entry, ...more] = raw.entry;
        assert.equal(more.length, 0);
        assert.equal(entry.search.mode, 'outcome');
        assert.equal(entry.resource.resourceType, 'OperationOutcome');
        assert.equal(entry.resource.issue[0].severity, 'warning');
        assert.equal(entry.resource.issue[0].code, 'not-found');
        assert.match(entry.resource.issue[0].diagnostics, /org-notes_a is not an Organization id.*org_id org-notes_a is Organization\/org--notes-ua/);
        assert.deepEqual(fhirIssues(raw), []);
      }
      // A well-formed id no agent is owned by: a warning without a suggestion.
      const unknown = await bundle(`${baseUrl}/fhir/Device?organization=Organization/org--nhs`);
      assert.equal(unknown.total, 0);
      assert.match(outcomes(unknown)[0].resource.issue[0].diagnostics, /there is no Organization\/org--nhs here/);
      assert.doesNotMatch(outcomes(unknown)[0].resource.issue[0].diagnostics, /is Organization\//);
      assert.deepEqual(fhirIssues(unknown), []);
    });

    test('Endpoint searches give total: all endpoints, an owner\'s, one agent\'s, and a connection type on one page', async (t) => {
      const [registry] = await startRegistries(testScope(t), backend);
      const baseUrl = (registry as { baseUrl: string }).baseUrl;
      const endpoints = [
        { url: 'https://count.example.org/a2a', protocol: 'mesh-a2a-jsonrpc', priority: 10 },
        { url: 'https://count.example.org/fhir', protocol: 'fhir-rest', priority: 20 },
      ];
      const first = await register(baseUrl, agentBody({ display_name: 'Count one', owner: { org_id: 'org-count', org_name: 'Count' }, endpoints }));
      assert.equal(first.status, 201);
      const ulid = String(((await first.json()) as any).agent_id).split('/').pop();
      assert.equal((await register(baseUrl, agentBody({ display_name: 'Count two' }))).status, 201);
      const all = await bundle(`${baseUrl}/fhir/Endpoint?_count=1`);
      assert.equal(all.total, 3, 'every endpoint, though the page shows one');
      assert.equal(all.entry.length, 1);
      assert.deepEqual(fhirIssues(all), []);
      assert.equal((await bundle(`${baseUrl}/fhir/Endpoint?organization=Organization/org--count`)).total, 2);
      assert.equal((await bundle(`${baseUrl}/fhir/Endpoint?identifier=${ulid}`)).total, 2);
      const byType = await bundle(`${baseUrl}/fhir/Endpoint?connection-type=hl7-fhir-rest`);
      assert.equal(byType.total, 1, 'a first page with no next is the whole answer');
      // A page of several: no count the store can give exactly, so no total until the last page is known.
      const paged = await bundle(`${baseUrl}/fhir/Endpoint?connection-type=mesh-a2a-jsonrpc&_count=1`);
      assert.equal(paged.entry.length, 1);
      assert.ok(paged.link.some((link: any) => link.relation === 'next'));
      assert.equal(paged.total, undefined);
    });
  });
}
