/**
 * Bug pinned (issue 48, finding 4): `NHS Triage \u202Egnp.exe\u202C Official`, zero-width spaces and
 * Cyrillic look-alikes (`NНS Тriage`) in `display_name` and `owner.org_name` were stored and shown as
 * given, and a zero-width space or a look-alike letter defeated the one-live-name-per-organisation
 * rule. Bidirectional controls and invisible characters are now refused (422), and names are compared
 * by their UTS #39 confusable skeleton (migration 019), on SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import * as nameSkeletonMigration from '../../../src/registry/storage/migrations/019-agent-name-skeleton.ts';
import { agentBody, BACKENDS, buildTestRegistry, registerAgent, ulidOf, writeHeaders, type TestRegistry } from '../../helpers/registry.ts';

const LOOK_ALIKE = 'N\u041DS \u0422riage'; // Cyrillic En and Te

const register = (registry: TestRegistry, overrides: Record<string, unknown>) =>
  registry.call({ method: 'POST', url: '/v1/agents', headers: writeHeaders(), payload: agentBody(overrides) });

function updateBody(record: Record<string, any>, changes: Record<string, unknown> = {}) {
  const { display_name, endpoints, capabilities, trust, owner, policy_tags } = record;
  return { display_name, endpoints: endpoints.map(({ health: _health, ...endpoint }: Record<string, unknown>) => endpoint), capabilities, trust, owner, policy_tags, ...changes };
}

const put = (registry: TestRegistry, record: Record<string, any>, changes: Record<string, unknown>) =>
  registry.call({ method: 'PUT', url: `/v1/agents/${ulidOf(record.agent_id)}`, headers: writeHeaders({ 'if-match': `"${record.version}"` }), payload: updateBody(record, changes) });

async function skeletonOf(registry: TestRegistry, agentId: string): Promise<string | null> {
  const row = await registry.storage.db.selectFrom('agents').select('name_skeleton').where('id', '=', ulidOf(agentId)).executeTakeFirstOrThrow();
  return row.name_skeleton;
}

for (const backend of BACKENDS) {
  describe(`agent names [${backend}]`, () => {
    test('bidirectional controls and invisible characters in display_name and owner.org_name are refused, naming the character', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const cases: Array<[Record<string, unknown>, string, RegExp]> = [
        [{ display_name: 'NHS Triage \u202Egnp.exe\u202C Official' }, '/display_name', /U\+202E, a bidirectional control character, at character 12/],
        [{ display_name: 'NHS\u200B Triage' }, '/display_name', /U\+200B, an invisible character/],
        [{ display_name: 'NHS Triage\u2066' }, '/display_name', /U\+2066, a bidirectional control character/],
        [{ display_name: 'NHS\u00ADTriage' }, '/display_name', /U\+00AD, an invisible character/],
        [{ display_name: 'NHS\tTriage' }, '/display_name', /U\+0009, a control character/],
        [{ owner: { org_id: 'org-nhs-example', org_name: 'Example \u202ENHS Trust' } }, '/owner/org_name', /U\+202E/],
        [{ owner: { org_id: 'org-nhs-example', org_name: 'Example\uFEFF NHS Trust' } }, '/owner/org_name', /U\+FEFF, an invisible character/],
      ];
      for (const [overrides, pointer, reason] of cases) {
        const answer = await register(registry, overrides);
        assert.equal(answer.status, 422, JSON.stringify(overrides));
        assert.equal(answer.body.error.code, 'VALIDATION_ERROR');
        const error = answer.body.error.details.errors.find((candidate: { pointer: string }) => candidate.pointer === pointer);
        assert.ok(error, JSON.stringify(answer.body.error.details));
        assert.match(error.reason, reason);
      }
      const agent = await registerAgent(registry, { display_name: 'Café Triage 24/7 — 東京' });
      assert.equal((await put(registry, agent, { display_name: 'Café\u200D Triage' })).status, 422, 'an update is held to the same rule');
      assert.equal((await registry.storage.db.selectFrom('agents').select('id').execute()).length, 1, 'nothing refused was stored');
    });

    test('a look-alike of a live name of the organisation is AGENT_CONFLICT; another organisation, or after revocation, it registers', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const owner = { org_id: 'org-leeds', org_name: 'Leeds Teaching Hospitals' };
      const first = await registerAgent(registry, { display_name: 'NHS Triage', owner });
      assert.equal(await skeletonOf(registry, first.agent_id), 'NHS Triage');
      for (const name of [LOOK_ALIKE, 'NHS Triage', 'NHS Tri\u0430ge', '\u039DHS Triage']) {
        const answer = await register(registry, { display_name: name, owner });
        assert.equal(answer.status, 409, `${JSON.stringify(name)}: ${JSON.stringify(answer.body)}`);
        assert.equal(answer.body.error.code, 'AGENT_CONFLICT');
      }
      const elsewhere = await register(registry, { display_name: LOOK_ALIKE, owner: { org_id: 'org-york' } });
      assert.equal(elsewhere.status, 201, 'names are unique within an organisation only');

      // Renaming another agent of the organisation to a look-alike is refused too.
      const second = await registerAgent(registry, { display_name: 'Consent desk', owner });
      const renamed = await put(registry, second, { display_name: LOOK_ALIKE });
      assert.equal(renamed.status, 409, JSON.stringify(renamed.body));
      assert.equal(renamed.body.error.code, 'AGENT_CONFLICT');

      // Two look-alikes registered at once: the unique index lets exactly one in.
      const racing = await Promise.all([register(registry, { display_name: 'Stroke pathway', owner: { org_id: 'org-hull' } }), register(registry, { display_name: 'Str\u043Eke pathway', owner: { org_id: 'org-hull' } })]);
      assert.deepEqual(racing.map((answer) => answer.status).sort(), [201, 409]);

      const revoked = await registry.call({ method: 'POST', url: `/v1/agents/${ulidOf(first.agent_id)}/revoke`, headers: writeHeaders(), payload: { reason: 'replaced' } });
      assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
      assert.equal((await register(registry, { display_name: LOOK_ALIKE, owner })).status, 201, 'a revoked name is free again');
    });

    test('migration 019 backfills skeletons; look-alikes already live keep their names, the oldest holding the skeleton', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const owner = { org_id: 'org-leeds' };
      const oldest = await registerAgent(registry, { display_name: 'NHS Triage', owner });
      const later = await registerAgent(registry, { display_name: 'Placeholder', owner });
      const other = await registerAgent(registry, { display_name: 'NHS Triage', owner: { org_id: 'org-york' } });
      const gone = await registerAgent(registry, { display_name: 'Retired desk', owner });
      await registry.call({ method: 'POST', url: `/v1/agents/${ulidOf(gone.agent_id)}/revoke`, headers: writeHeaders(), payload: { reason: 'gone' } });
      // Back to the schema before 019, where a look-alike could be stored beside its original.
      const db = registry.storage.db;
      await nameSkeletonMigration.down(db as never);
      const row = await db.selectFrom('agents').select('record').where('id', '=', ulidOf(later.agent_id)).executeTakeFirstOrThrow();
      const record = { ...JSON.parse(row.record), display_name: LOOK_ALIKE };
      await sql`update agents set display_name = ${LOOK_ALIKE}, record = ${JSON.stringify(record)} where id = ${ulidOf(later.agent_id)}`.execute(db);

      await nameSkeletonMigration.up(db as never);
      assert.equal(await skeletonOf(registry, oldest.agent_id), 'NHS Triage');
      assert.equal(await skeletonOf(registry, later.agent_id), null, 'the younger look-alike keeps its name without the skeleton');
      assert.equal(await skeletonOf(registry, other.agent_id), 'NHS Triage', 'another organisation');
      assert.equal(await skeletonOf(registry, gone.agent_id), 'Retired desk', 'revoked rows get theirs too');

      // The kept look-alike can still be updated under its name; a third look-alike cannot come in.
      const current = (await registry.call({ method: 'GET', url: `/v1/agents/${ulidOf(later.agent_id)}` })).body;
      const kept = await put(registry, current, { description: 'still here' });
      assert.equal(kept.status, 200, JSON.stringify(kept.body));
      assert.equal(await skeletonOf(registry, later.agent_id), null);
      assert.equal((await register(registry, { display_name: 'NHS Tri\u0430ge', owner })).status, 409);
      // Renamed to a name of its own, it gets its skeleton.
      const renamed = await put(registry, kept.body, { display_name: 'Leeds consent desk' });
      assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
      assert.equal(await skeletonOf(registry, later.agent_id), 'Leeds consent desk');
    });
  });
}
