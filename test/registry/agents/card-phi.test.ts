/**
 * Security round 4, finding 1 (issue 41): protected health information that arrives by a fetch (a card
 * at registration, a scheduled re-read) is refused as a request body's is: 422 PHI_DETECTED, nothing
 * written, nothing served by `GET /v1/agents/{id}` or `GET /fhir/Device/{id}`. Real card servers on
 * loopback, both backends.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BACKENDS, buildTestRegistry, registerAgent, ulidOf, writeHeaders, type TestRegistry } from '../../helpers/registry.ts';
import { PHI_DESCRIPTION, cardFor, cardKeyPair, signed, startCardServer, startSignedCardServer } from './card-fixtures.ts';
const PHI_FRAGMENTS = ['Jane Smith', '943 476 5919', '00482913', '123-45-6789', '12/03/1980'];

const fromCard = (registry: TestRegistry, cardUrl: string) =>
  registry.call({ method: 'POST', url: '/v1/agents/from-card', headers: writeHeaders(), payload: { card_url: cardUrl, jurisdiction: 'GB', owner: { org_id: 'org-leeds' } } });

const count = async (registry: TestRegistry, table: 'agents' | 'events' | 'ledger_leaves' | 'agent_cards' | 'agent_versions') =>
  Number((await registry.storage.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

/** Every row a record is kept in, as text: nothing of the PHI may be in any. */
async function storedText(registry: TestRegistry): Promise<string> {
  const tables = ['agents', 'agent_versions', 'events', 'ledger_leaves', 'agent_cards', 'idempotency_keys'] as const;
  const rows = await Promise.all(tables.map((table) => registry.storage.db.selectFrom(table).selectAll().execute()));
  return JSON.stringify(rows);
}

for (const backend of BACKENDS) {
  describe(`PHI through a card [${backend}]`, () => {
    test('a card whose description carries a name, a date of birth, an NHS number, an MRN, an SSN and a diagnosis: 422 PHI_DETECTED, nothing written', async (t) => {
      const server = await startCardServer(t);
      const registry = await buildTestRegistry(t, backend);
      server.card = cardFor(server.origin, { description: PHI_DESCRIPTION, skills: [{ id: 'summarise', name: 'Summarise', description: PHI_DESCRIPTION }] });
      const answer = await fromCard(registry, server.cardUrl);
      assert.equal(answer.status, 422, JSON.stringify(answer.body));
      assert.equal(answer.body.error.code, 'PHI_DETECTED');
      const findings = answer.body.error.details.findings as Array<{ detector: string; in: string; pointer: string }>;
      assert.ok(findings.length > 0);
      assert.ok(findings.every((finding) => finding.in === 'record' && finding.pointer === '/description'), JSON.stringify(findings));
      assert.ok(!PHI_FRAGMENTS.some((fragment) => JSON.stringify(answer.body).includes(fragment)), 'the answer never quotes the value');
      for (const table of ['agents', 'events', 'ledger_leaves', 'agent_cards', 'agent_versions'] as const) assert.equal(await count(registry, table), 0, table);
      const stored = await storedText(registry);
      assert.ok(!PHI_FRAGMENTS.some((fragment) => stored.includes(fragment)), 'nothing of it stored');
    });

    test('a registered card that changes to carry PHI: the re-read suspends the agent (PHI_DETECTED), the record keeps its description, and neither the API nor FHIR serves the PHI', async (t) => {
      const key = await cardKeyPair('k1');
      const server = await startSignedCardServer(t, key);
      const registry = await buildTestRegistry(t, backend);
      const registered = await fromCard(registry, server.cardUrl);
      assert.equal(registered.status, 201, JSON.stringify(registered.body));
      const id = ulidOf(registered.body.agent_id);
      server.card = await signed(cardFor(server.origin, { description: PHI_DESCRIPTION }), key, server.jwksUrl);

      const round = await registry.app.ward.cards.rereadAll();
      assert.deepEqual(round, { read: 1, updated: 0, suspended: 1, failed: 0 });
      const agent = (await registry.call({ method: 'GET', url: `/v1/agents/${id}` })).body;
      assert.equal(agent.status, 'suspended');
      assert.match(agent.status_reason, /^agent card re-read failed: PHI_DETECTED/);
      assert.equal(agent.description, registered.body.description);
      const device = await registry.app.inject({ method: 'GET', url: `/fhir/Device/${id}` });
      assert.equal(device.statusCode, 200);
      for (const text of [JSON.stringify(agent), device.body, await storedText(registry)]) {
        assert.ok(!PHI_FRAGMENTS.some((fragment) => text.includes(fragment)), 'the PHI is nowhere');
      }
    });

    test('content stored under an earlier guard never blocks a status change; new or changed content is scanned', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const agent = await registerAgent(registry, { owner: { org_id: 'org-leeds' } });
      const id = ulidOf(agent.agent_id);
      // As if stored before the guard knew this label: the record's description, written directly.
      const row = await registry.storage.db.selectFrom('agents').select('record').where('id', '=', id).executeTakeFirstOrThrow();
      const record = JSON.parse(row.record);
      record.description = 'Quote PAS number: 1234567 on referrals.';
      await registry.storage.db.updateTable('agents').set({ record: JSON.stringify(record) }).where('id', '=', id).execute();
      const suspended = await registry.call({ method: 'POST', url: `/v1/agents/${id}/suspend`, headers: writeHeaders(), payload: { reason: 'under review' } });
      assert.equal(suspended.status, 200, JSON.stringify(suspended.body));
      const revoked = await registry.call({ method: 'POST', url: `/v1/agents/${id}/revoke`, headers: writeHeaders(), payload: { reason: 'held an identifier' } });
      assert.equal(revoked.status, 200, JSON.stringify(revoked.body));

      const other = await registerAgent(registry, { owner: { org_id: 'org-leeds' } });
      const { display_name, endpoints, capabilities, trust, owner, policy_tags } = other;
      const put = await registry.call({
        method: 'PUT',
        url: `/v1/agents/${ulidOf(other.agent_id)}`,
        headers: writeHeaders({ 'if-match': `"${other.version}"` }),
        payload: { display_name, endpoints: endpoints.map(({ health: _h, ...e }: Record<string, unknown>) => e), capabilities, trust, owner, policy_tags, description: 'Quote PAS number: 1234567 on referrals.' },
      });
      assert.equal(put.status, 422, JSON.stringify(put.body));
      assert.equal(put.body.error.code, 'PHI_DETECTED');
    });

    test('an ordinary clinical card (capabilities, not a patient) still registers and is served', async (t) => {
      const server = await startCardServer(t);
      const registry = await buildTestRegistry(t, backend);
      const description = 'Summarises discharge letters for GPs: medication changes, follow-up, diabetes and heart-failure pathways. Contact ops@trust.example.org.';
      server.card = cardFor(server.origin, { description });
      const answer = await fromCard(registry, server.cardUrl);
      assert.equal(answer.status, 201, JSON.stringify(answer.body));
      assert.equal(answer.body.description, description);
    });
  });
}
