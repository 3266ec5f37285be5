/**
 * Computer-use runs as FHIR `Provenance` (issue 32, item 2): a real run (the real console, Debian's
 * Chromium, the scripted Messages API server of test/helpers/scripted-model.ts) appears as one
 * Provenance with the model as its performer, a contained `Device`; its target the page the run opened;
 * each ledger leaf of the run an entity that `ward ledger verify` accepts. Read by fhir-kit-client,
 * checked by Medplum's R4 validator. Both backends.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { Client } from 'fhir-kit-client';
import { NEEDS_CHROMIUM, startConsoleFor } from '../../console/console-harness.ts';
import { WAIT_TIMEOUT_MS, startRegistries, testScope } from '../../helpers/listening.ts';
import { BACKENDS } from '../../helpers/registry.ts';
import { eventually } from '../../helpers/eventually.ts';
import { fhirIssues } from '../../helpers/fhir-validation.ts';
import { SCRIPTED_MODEL_KEY, startScriptedModel } from '../../helpers/scripted-model.ts';
import { runWard } from '../../helpers/ward-process.ts';
import { runProvenanceOf } from '../../../src/registry/fhir/run-provenance.ts';

const TASK = 'Look at the dashboard and say what it shows.';

describe('computer-use runs as FHIR Provenance', NEEDS_CHROMIUM, () => {
  for (const backend of BACKENDS) {
    test(`${backend}: a run is one Provenance: the model a contained Device as performer, the page its target, each leaf an entity`, async (t) => {
      const scope = testScope(t);
      const model = await startScriptedModel(scope, (index) => (index === 0 ? { actions: [{ action: 'screenshot' }] } : { final: 'The dashboard shows the registry.' }));
      const [registry] = await startRegistries(scope, backend, { env: { COMPUTER_USE_API_KEY: SCRIPTED_MODEL_KEY, COMPUTER_USE_MODEL_URL: model.url } });
      assert.ok(registry);
      const consoleServer = await startConsoleFor(scope, registry.baseUrl);
      registry.app.ward.computerUse.setConsoleOrigin(consoleServer.url);
      const baseUrl = registry.baseUrl;

      const started = await fetch(`${baseUrl}/v1/admin/computer-use/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-idempotency-key': crypto.randomUUID() },
        body: JSON.stringify({ task: TASK, persona: 'auditor', max_turns: 3 }),
      });
      assert.equal(started.status, 202, await started.clone().text());
      const sessionId = ((await started.json()) as any).session_id as string;
      let status = 'queued';
      const run: any = await eventually(
        async () => {
          const now: any = await (await fetch(`${baseUrl}/v1/admin/computer-use/runs/${sessionId}`)).json();
          status = now.status;
          return now.ended_at ? now : undefined;
        },
        () => `the run to end (still ${status})`,
        WAIT_TIMEOUT_MS,
        100,
      );
      assert.equal(run.status, 'completed', run.failure_reason);

      const client = new Client({ baseUrl: `${baseUrl}/fhir` });
      const bundle: any = await client.search({ resourceType: 'Provenance', searchParams: { target: run.url } });
      assert.deepEqual(fhirIssues(bundle), []);
      assert.equal(bundle.entry.length, 1);
      const provenance = bundle.entry[0].resource;
      assert.equal(provenance.id, `run-${sessionId}`);
      // The page as the ledger records it: the digest of its address, which whoever holds the address checks.
      assert.deepEqual(provenance.target[0].identifier, { system: 'urn:ward:fhir:NamingSystem:url-sha256', value: `sha256:${createHash('sha256').update(run.url).digest('hex')}` });
      // The model: a Device contained in the Provenance, the performer.
      const [device] = provenance.contained;
      assert.equal(device.resourceType, 'Device');
      assert.deepEqual(device.deviceName, [{ name: 'claude-sonnet-4-6', type: 'model-name' }]);
      assert.equal(device.type.coding[0].code, 'ai-model');
      assert.equal(provenance.agent[0].type.coding[0].code, 'performer');
      assert.equal(provenance.agent[0].who.reference, `#${device.id}`);
      assert.equal(provenance.agent[1].type.coding[0].code, 'custodian');
      assert.equal(provenance.occurredPeriod.start <= provenance.occurredPeriod.end, true);
      assert.match(provenance.activity.text, /: completed$/);
      assert.ok(!JSON.stringify(provenance).includes('auditor'), 'the persona is a digest in the ledger, and absent here');
      // Every ledger entry of the run, in order, and nothing of the task's words.
      assert.deepEqual(provenance.entity.map((entity: any) => Number(entity.what.identifier.value)), run.ledger_entries.map((entry: any) => entry.leaf_index));
      assert.ok(provenance.entity.every((entity: any) => entity.what.identifier.system === `${baseUrl}/v1/transparency/entries`));
      assert.ok(!JSON.stringify(provenance).includes(TASK));
      const verified = await runWard(t, ['ledger', 'verify', '--url', baseUrl, '--leaf', provenance.entity.at(-1).what.identifier.value]);
      assert.equal(verified.code, 0, verified.stderr + verified.stdout);

      const read: any = await client.read({ resourceType: 'Provenance', id: provenance.id });
      assert.deepEqual({ ...read, signature: undefined }, { ...provenance, signature: undefined });
      assert.deepEqual(fhirIssues(read), []);

      // Another page was opened by no run; an unknown run is 404; an agent's history holds no run.
      const elsewhere = await (await fetch(`${baseUrl}/fhir/Provenance?target=${encodeURIComponent(`${consoleServer.url}/agents`)}&_summary=count`)).json() as any;
      assert.equal(elsewhere.total, 0);
      const unknown = await fetch(`${baseUrl}/fhir/Provenance/run-01ARZ3NDEKTSV4RRFFQ69G5FAV`);
      assert.equal(unknown.status, 404);
      assert.equal(((await unknown.json()) as any).issue[0].details.coding[0].code, 'RESOURCE_NOT_FOUND');
      const counted = await (await fetch(`${baseUrl}/fhir/Provenance?target=${encodeURIComponent(run.url)}&_summary=count`)).json() as any;
      assert.equal(counted.total, 1);
      const badToken = await fetch(`${baseUrl}/fhir/Provenance?target=${encodeURIComponent(run.url)}&_page_token=${Buffer.from('fhir-Provenance:["nope",0,0]').toString('base64url')}`);
      assert.equal(badToken.status, 400);
    });
  }
});

test('a run ledgered before the model was recorded, or not yet started, still gives a valid Provenance that says so', () => {
  const leaf = (leafIndex: number, type: string, data: Record<string, unknown>) => ({
    leafIndex,
    seq: leafIndex + 1,
    leafHash: 'ab'.repeat(32),
    entry: JSON.stringify({ seq: leafIndex + 1, type, subject: '01ARZ3NDEKTSV4RRFFQ69G5FAV', occurred_at: `2026-01-01T00:00:0${leafIndex}.000Z`, data }),
  });
  const context = { registryId: 'registry://gb/registries/local', entriesUrl: 'http://127.0.0.1/v1/transparency/entries', treeHead: { tree_size: 9, timestamp: '2026-01-01T00:01:00.000Z', signature: 'e30.e30.sig' } as any };
  const requested = leaf(0, 'computer_use.requested', { url: `sha256:${'cd'.repeat(32)}`, status: 'queued' });
  const older = runProvenanceOf('01ARZ3NDEKTSV4RRFFQ69G5FAV', [requested, leaf(1, 'computer_use.started', {}), leaf(2, 'computer_use.ended', { status: 'failed' })], context) as any;
  assert.equal(older.contained[0].deviceName, undefined);
  assert.match(older.contained[0].note[0].text, /before the registry recorded the model/);
  assert.equal(older.agent[0].who.display, 'AI model (not recorded)');
  assert.match(older.activity.text, /: failed$/);
  assert.deepEqual(fhirIssues(older), []);
  const queued = runProvenanceOf('01ARZ3NDEKTSV4RRFFQ69G5FAV', [requested], context) as any;
  assert.equal(queued.occurredPeriod, undefined);
  assert.match(queued.activity.text, /: queued$/);
  assert.deepEqual(fhirIssues(queued), []);
  // Leaves of something else under the same subject, without the request, are no run.
  assert.equal(runProvenanceOf('01ARZ3NDEKTSV4RRFFQ69G5FAV', [leaf(1, 'computer_use.started', {})], context), undefined);
});
