/**
 * Discovery's ranking reads copies of each agent's ranking columns on its skill rows (migration 009).
 * Property: after any sequence of registrations, updates (skills, jurisdiction, priority, trust),
 * status changes and health changes, every discovery answer (with and without a jurisdiction filter,
 * with filters that make it read in slices, at several limits) is exactly the reference model's
 * order: trust level, health, preferred jurisdiction, priority, age, id.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { setHealthRank } from '../../../src/registry/agents/storage/agent-store.ts';
import { runWrite } from '../../../src/registry/storage/write-unit.ts';
import {
  BACKENDS,
  agentBody,
  buildTestRegistry,
  registerAgent,
  ulidOf,
  writeHeaders,
} from '../../helpers/registry.ts';
import { makeCertificate } from '../agents/evidence/fixtures.ts';

const DAY = 86_400_000;
const SKILLS = ['s.a', 's.b', 's.c'];
const JURISDICTIONS = ['GB', 'FR', 'DE'];

type Model = {
  id: string;
  name: string;
  skills: string[];
  jurisdiction: string;
  priority: number;
  certified: boolean;
  status: string;
  health: number;
  feature: boolean;
  flag: boolean;
  fhir: boolean;
  order: number;
};

const shape = fc.record({
  skills: fc.subarray(SKILLS, { minLength: 1 }),
  jurisdiction: fc.constantFrom(...JURISDICTIONS),
  priority: fc.integer({ min: 0, max: 3 }),
  certified: fc.boolean(),
  feature: fc.boolean(),
  /** A boolean capability flag, which counts as a feature. */
  flag: fc.boolean(),
  /** A second endpoint speaking fhir-rest. */
  fhir: fc.boolean(),
});
const operation = fc.oneof(
  fc.record({ kind: fc.constant('register' as const), shape }),
  fc.record({ kind: fc.constant('update' as const), pick: fc.nat(), shape }),
  fc.record({
    kind: fc.constantFrom('suspend' as const, 'reinstate' as const, 'retire' as const),
    pick: fc.nat(),
  }),
  fc.record({ kind: fc.constant('health' as const), pick: fc.nat(), rank: fc.integer({ min: 0, max: 2 }) }),
);

type Shape = typeof shape extends fc.Arbitrary<infer T> ? T : never;
type Operation = typeof operation extends fc.Arbitrary<infer T> ? T : never;

for (const backend of BACKENDS) {
  describe(`discovery ranking matches the model [${backend}]`, () => {
    test('after any sequence of writes, every answer is the model order', async (t) => {
      // The answer cache off: this is about the ranking (health changes made here emit no events).
      const registry = await buildTestRegistry(t, backend, { env: { REGISTRY_DISCOVERY_CACHE_ENTRIES: '0' } });
      const cert = makeCertificate({
        notBefore: new Date(Date.now() - DAY),
        notAfter: new Date(Date.now() + 365 * DAY),
      }).pem;
      const body = (
        name: string,
        s: Shape,
      ) =>
        agentBody({
          display_name: name,
          jurisdiction: s.jurisdiction,
          endpoints: [
            { url: 'https://agents.example.org/a2a', protocol: 'mesh-a2a-jsonrpc', priority: s.priority },
            ...(s.fhir ? [{ url: 'https://agents.example.org/fhir', protocol: 'fhir-rest', priority: 90 }] : []),
          ],
          capabilities: {
            protocols: ['mesh-a2a-jsonrpc'],
            skills: s.skills,
            features: s.feature ? ['rare'] : [],
            stream_resume: s.flag,
          },
          trust: { certificates: s.certified ? [cert] : [], signatures: [], attestations: [] },
        });
      // Jurisdiction is fixed at registration (an update that names it is refused).
      const updateBody = (name: string, s: Parameters<typeof body>[1]) => {
        const { jurisdiction: _fixed, ...rest } = body(name, s);
        return rest;
      };
      let counter = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 12 }), async (operations) => {
          // Each run starts from no discoverable agents: the previous run's are retired.
          const models: Model[] = [];
          try {
            await check(models, operations);
          } finally {
            for (const model of models.filter((m) => m.status !== 'retired')) {
              await registry.call({
                method: 'POST',
                url: `/v1/agents/${model.id}/retire`,
                headers: writeHeaders(),
                payload: {},
              });
            }
          }
        }),
        { numRuns: 15 },
      );

      async function check(
        models: Model[],
        operations: Operation[],
      ) {
        for (const op of operations) {
          const target = 'pick' in op && models.length > 0 ? models[op.pick % models.length] : undefined;
          if (op.kind === 'register') {
            const name = `agent ${(counter += 1)}`;
            const record = await registerAgent(registry, body(name, op.shape));
            models.push({
              id: ulidOf(record.agent_id),
              name,
              ...op.shape,
              status: 'active',
              health: 1,
              order: counter,
            });
          } else if (op.kind === 'update' && target && target.status !== 'retired') {
            const response = await registry.call({
              method: 'PUT',
              url: `/v1/agents/${target.id}`,
              headers: writeHeaders({ 'if-match': '*' }),
              payload: updateBody(target.name, { ...op.shape, jurisdiction: target.jurisdiction }),
            });
            assert.equal(response.status, 200, JSON.stringify(response.body));
            // An update resets health to unknown until the endpoints are probed again (agent-service.ts).
            Object.assign(target, { ...op.shape, jurisdiction: target.jurisdiction, health: 1 });
          } else if ((op.kind === 'suspend' || op.kind === 'reinstate' || op.kind === 'retire') && target) {
            const allowed = {
              suspend: ['active'],
              reinstate: ['suspended'],
              retire: ['active', 'suspended'],
            }[op.kind];
            if (!allowed.includes(target.status)) continue;
            const response = await registry.call({
              method: 'POST',
              url: `/v1/agents/${target.id}/${op.kind}`,
              headers: writeHeaders(),
              payload: { reason: 'test' },
            });
            assert.equal(response.status, 200, JSON.stringify(response.body));
            target.status = { suspend: 'suspended', reinstate: 'active', retire: 'retired' }[op.kind];
          } else if (op.kind === 'health' && target) {
            await runWrite(registry.storage, (unit) => setHealthRank(unit.tx, target.id, op.rank));
            target.health = op.rank;
          }
        }
        for (const skill of SKILLS) {
          for (const jurisdiction of [undefined, ...JURISDICTIONS]) {
            for (const [limit, filter] of [
              [1, undefined],
              [3, undefined],
              [50, undefined],
              [2, 'feature'],
              [2, 'flag'],
              [50, 'fhir'],
            ] as const) {
              const preferred = jurisdiction ?? 'GB';
              const expected = models
                .filter(
                  (m) =>
                    m.status === 'active' &&
                    m.skills.includes(skill) &&
                    (!jurisdiction || m.jurisdiction === jurisdiction) &&
                    (!filter || m[filter]),
                )
                .sort(
                  (a, b) =>
                    Number(b.certified) - Number(a.certified) ||
                    b.health - a.health ||
                    Number(b.jurisdiction === preferred) - Number(a.jurisdiction === preferred) ||
                    a.priority - b.priority ||
                    a.order - b.order,
                )
                .slice(0, limit)
                .map((m) => m.name);
              const query = `capability=${skill}&limit=${limit}${jurisdiction ? `&jurisdiction=${jurisdiction}` : ''}${filter ? { feature: '&require_features=rare', flag: '&require_features=stream_resume', fhir: '&protocol=fhir-rest' }[filter] : ''}`;
              const response = await registry.call({ method: 'GET', url: `/v1/discover?${query}` });
              assert.equal(response.status, 200);
              assert.deepEqual(
                response.body.results.map((r: { display_name: string }) => r.display_name),
                expected,
                query,
              );
            }
          }
        }
      }
    });
  });
}
