import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test, type TestContext } from 'node:test';
import { FEDERATION_BUDGET_HEADER, timeoutWithinBudget } from '../../../../src/registry/discovery/federated/federated-discovery.ts';
import { issueFederationToken } from '../../../../src/registry/federation/federation-token.ts';
import { delegate, registrationBody, startRegistry, type RunningRegistry } from '../../../helpers/federation.ts';
import { BACKENDS, registerAgent, writeHeaders } from '../../../helpers/registry.ts';

const SKILLS = { skills: ['imaging.read'], protocols: ['mesh-a2a-jsonrpc'] };
const FEDERATED = '/v1/discover?capability=imaging.read&federated=true';
/** ranking.ts: trust level 3 × 1000 + healthy 200 + jurisdiction 10 + priority 0 → 9.99. */
const MAX_SCORE = 3219.99;

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/** A loopback HTTP server whose behaviour the test swaps; closed (connections and all) when the test ends. */
async function localServer(t: TestContext, handler: Handler): Promise<{ url: string; handle(next: Handler): void }> {
  let current = handler;
  const server = createServer((request, response) => current(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    handle(next) {
      current = next;
    },
  };
}

async function registerAt(parent: RunningRegistry, child: RunningRegistry, tier: 'sovereign' | 'organisational', overrides: Record<string, unknown>) {
  const response = await parent.call({ method: 'POST', url: '/v1/registries', headers: writeHeaders(), payload: await registrationBody(child, tier, overrides) });
  assert.equal(response.status, 201, JSON.stringify(response.body));
}

const ids = (body: { results: Array<{ agent_id: string }> }) => body.results.map((r) => r.agent_id);
const childOf = (body: { federation: { children: Array<{ registry_id: string }> } }, id: string): any => body.federation.children.find((c) => c.registry_id === id);

test('a parent budget cuts a registry\'s own wait to 60% less a margin, never below 100 ms nor above its configured timeout', () => {
  assert.equal(timeoutWithinBudget(2000, '1000'), 550);
  assert.equal(timeoutWithinBudget(2000, '100'), 100);
  assert.equal(timeoutWithinBudget(300, '100000'), 300);
  for (const insane of [undefined, '', 'abc', '-5', '0', '12.5', '1e4', ' 900', '99999999', ['1000', '1000']]) {
    assert.equal(timeoutWithinBudget(2000, insane), 2000, JSON.stringify(insane));
  }
});

for (const backend of BACKENDS) {
  describe(`federated discovery [${backend}]`, () => {
    // Bug: every tier waited the same timeout, so an organisation that never answered made the root
    // time out the whole sovereign and lose the sovereign's own agents.
    test('a sovereign whose organisation never answers still gives the root its own agents, as a partial answer', async (t) => {
      const root = await startRegistry(t, backend, { REGISTRY_TIER: 'root', REGISTRY_NAME: 'root', REGISTRY_JURISDICTION: 'GB' });
      const sovereign = await startRegistry(t, backend, { REGISTRY_TIER: 'sovereign', REGISTRY_NAME: 'nhs', REGISTRY_JURISDICTION: 'GB', REGISTRY_PARENT_URL: root.baseUrl });
      const org = await startRegistry(t, backend, { REGISTRY_TIER: 'organisational', REGISTRY_NAME: 'leeds', REGISTRY_JURISDICTION: 'GB', REGISTRY_PARENT_URL: sovereign.baseUrl });
      const silent = await startRegistry(t, backend, { REGISTRY_TIER: 'organisational', REGISTRY_NAME: 'york', REGISTRY_JURISDICTION: 'GB', REGISTRY_PARENT_URL: sovereign.baseUrl });
      await delegate(root, sovereign, 'sovereign');
      await delegate(sovereign, org, 'organisational');
      // york's address leads to a server that takes the request and never answers.
      const budgets: string[] = [];
      const hang = await localServer(t, (request) => budgets.push(String(request.headers[FEDERATION_BUDGET_HEADER])));
      await registerAt(sovereign, silent, 'organisational', { api_base_url: hang.url });
      const atSovereign = await registerAgent(sovereign, { display_name: 'national reader', capabilities: SKILLS });
      const atOrg = await registerAgent(org, { display_name: 'org reader', capabilities: SKILLS });

      const answer = await root.call({ method: 'GET', url: FEDERATED });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.ok(ids(answer.body).includes(atSovereign.agent_id), "the sovereign's own agent");
      assert.ok(ids(answer.body).includes(atOrg.agent_id), 'the organisation that did answer');
      assert.deepEqual(answer.body.federation, { partial: true, children: [{ registry_id: sovereign.id, status: 'ok', result_count: 2, partial: true }] });
      // Both wait 2000 ms by configuration; asked by the root, the sovereign waits at most 60% of that less a margin.
      assert.equal(budgets.length, 1);
      assert.ok(Number(budgets[0]) > 0 && Number(budgets[0]) <= 1150, `budget passed down: ${budgets[0]}`);

      // The sovereign's own view: york timed out, leeds answered.
      const token = await issueFederationToken(root.app.ward.signer, { iss: root.id, aud: sovereign.id, now: new Date() });
      const asked = await sovereign.call({ method: 'GET', url: FEDERATED, headers: { authorization: `Bearer ${token}`, [FEDERATION_BUDGET_HEADER]: '500' } });
      assert.equal(asked.status, 200);
      assert.equal(childOf(asked.body, silent.id).status, 'timeout');
      assert.equal(childOf(asked.body, org.id).status, 'ok');
      assert.ok(Number(budgets[1]) <= 250, `a parent's budget of 500 ms leaves at most 250 ms for york: ${budgets[1]}`);

      // The header is a parent registry's to give: from anyone else it is ignored.
      const fromClient = await sovereign.call({ method: 'GET', url: FEDERATED, headers: { [FEDERATION_BUDGET_HEADER]: '500' } });
      assert.equal(fromClient.status, 200);
      assert.ok(Number(budgets[2]) > 1150, `the configured timeout applies: ${budgets[2]}`);
    });

    test('children without an address are not asked nor reported; a child that does not sign is refused, saying so', async (t) => {
      const root = await startRegistry(t, backend, { REGISTRY_TIER: 'root', REGISTRY_NAME: 'root', REGISTRY_JURISDICTION: 'GB' });
      const sovereign = await startRegistry(t, backend, { REGISTRY_TIER: 'sovereign', REGISTRY_NAME: 'nhs', REGISTRY_JURISDICTION: 'GB', REGISTRY_PARENT_URL: root.baseUrl });
      const addressless = await startRegistry(t, backend, { REGISTRY_TIER: 'sovereign', REGISTRY_NAME: 'ans', REGISTRY_JURISDICTION: 'FR', REGISTRY_PARENT_URL: root.baseUrl });
      await delegate(root, sovereign, 'sovereign');
      await registerAt(root, addressless, 'sovereign', { api_base_url: undefined });
      const atSovereign = await registerAgent(sovereign, { capabilities: SKILLS });

      const answer = await root.call({ method: 'GET', url: FEDERATED });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.deepEqual(ids(answer.body), [atSovereign.agent_id]);
      assert.deepEqual(answer.body.federation, { partial: false, children: [{ registry_id: sovereign.id, status: 'ok', result_count: 1 }] });

      const unsigned = await startRegistry(t, backend, { REGISTRY_TIER: 'sovereign', REGISTRY_NAME: 'bmg', REGISTRY_JURISDICTION: 'DE', REGISTRY_PARENT_URL: root.baseUrl, REGISTRY_SIGN_RESPONSES: 'false' });
      await delegate(root, unsigned, 'sovereign');
      const withUnsigned = await root.call({ method: 'GET', url: FEDERATED });
      assert.equal(withUnsigned.body.federation.partial, true);
      const refused = childOf(withUnsigned.body, unsigned.id);
      assert.equal(refused.status, 'error');
      assert.match(refused.error, /not signed/);
      assert.deepEqual(ids(withUnsigned.body), [atSovereign.agent_id]);
    });

    describe('a signed but hostile child answer', () => {
      /**
       * The root's sovereign child `nhs` is a real registry, but its registered address is a local server
       * that signs whatever the test wants with nhs's own key: a child that is correctly signed and lies.
       */
      async function hostileSetup(t: TestContext) {
        const root = await startRegistry(t, backend, { REGISTRY_TIER: 'root', REGISTRY_NAME: 'root', REGISTRY_JURISDICTION: 'GB' });
        const sovereign = await startRegistry(t, backend, { REGISTRY_TIER: 'sovereign', REGISTRY_NAME: 'nhs', REGISTRY_JURISDICTION: 'GB', REGISTRY_PARENT_URL: root.baseUrl });
        const server = await localServer(t, (_request, response) => response.writeHead(500).end());
        await registerAt(root, sovereign, 'sovereign', { api_base_url: server.url });
        const atRoot = await registerAgent(root, { display_name: 'root reader', capabilities: SKILLS });
        for (const name of ['first', 'second', 'third']) await registerAgent(sovereign, { display_name: `national ${name}`, capabilities: SKILLS });
        // Well-formed results, exactly as nhs itself would list them.
        const genuine = (await sovereign.call({ method: 'GET', url: '/v1/discover?capability=imaging.read' })).body.results as any[];
        assert.equal(genuine.length, 3);
        const sign = (payload: Record<string, unknown>, typ = 'ward-discovery+jwt') => sovereign.app.ward.signer.sign(payload, typ);
        const fresh = (results: unknown[], overrides: Record<string, unknown> = {}) => ({
          query: { capability: 'imaging.read', require_features: [], limit: 20, federated: true },
          results,
          result_count: results.length,
          iss: server.url,
          iat: Math.floor(Date.now() / 1000),
          ...overrides,
        });
        /** Answers the next requests with `body` (a function of nothing, evaluated per request). */
        const answerWith = (body: () => Promise<unknown>) =>
          server.handle((_request, response) => {
            void body().then((value) => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value)));
          });
        const ask = async () => {
          const answer = await root.call({ method: 'GET', url: FEDERATED });
          assert.equal(answer.status, 200, JSON.stringify(answer.body));
          return { body: answer.body, child: childOf(answer.body, sovereign.id) };
        };
        return { root, sovereign, server, atRoot, genuine, sign, fresh, answerWith, ask };
      }

      test('scores are clamped to what ranking can give, malformed results are dropped and counted, duplicates kept once', async (t) => {
        const { root, sovereign, atRoot, genuine, sign, fresh, answerWith, ask } = await hostileSetup(t);
        const [a, b, c] = genuine as [any, any, any];
        const { score_breakdown: _dropped, ...noBreakdown } = b;
        const results = [
          { ...a, score: 1e9 },
          { ...a, score: 5 }, // a again, ranked lower: only the first after sorting stays
          noBreakdown,
          { ...c, trust_bundle_url: 'not a url' },
          { ...c, score: 'high' },
          { ...c, agent_id: 'registry://fr/agents/01J00000000000000000000000', score: 1 },
          { ...c, agent_id: atRoot.agent_id, score: 1e9 }, // the root's own agent, claimed by the child and ranked first
          { ...c, score: -50 },
        ];
        answerWith(async () => ({ signed_response: await sign(fresh(results)) }));
        const { body, child } = await ask();
        assert.deepEqual(child, {
          registry_id: sovereign.id,
          status: 'ok',
          result_count: 4,
          error: '3 invalid result(s) dropped; 1 result(s) outside GB dropped',
        });
        assert.equal(body.federation.partial, false);
        assert.deepEqual(ids(body), [a.agent_id, atRoot.agent_id, c.agent_id], 'each agent once, ranked');
        const [first, own, last] = body.results;
        assert.ok(Math.abs(first.score - MAX_SCORE) < 1e-6, `a score of 1e9 is held to ${MAX_SCORE}: ${first.score}`);
        assert.equal(own.registry_id, root.id, "the root's own record wins over the child's copy, however it is ranked");
        assert.ok(own.score < MAX_SCORE, "and keeps the root's own score");
        assert.equal(last.score, 0, 'a negative score is held to 0');
      });

      test("registry_id is the child's, or for a sovereign a registry of the child's own jurisdiction", async (t) => {
        const { sovereign, genuine, sign, fresh, answerWith, ask } = await hostileSetup(t);
        const [a, b, c] = genuine as [any, any, any];
        const results = [
          { ...a, registry_id: 'registry://gb/registries/leeds' },
          { ...b, registry_id: 'registry://fr/registries/ans' },
          { ...c, registry_id: 'https://elsewhere.example/registries/x' },
        ];
        answerWith(async () => ({ signed_response: await sign(fresh(results)) }));
        const { body, child } = await ask();
        assert.equal(child.status, 'ok');
        const registryOf = new Map(body.results.map((r: any) => [r.agent_id, r.registry_id]));
        assert.equal(registryOf.get(a.agent_id), 'registry://gb/registries/leeds');
        assert.equal(registryOf.get(b.agent_id), sovereign.id);
        assert.equal(registryOf.get(c.agent_id), sovereign.id);
      });

      test('a result carrying protected health information is dropped and counted, as the one PHI guard refuses it in a record (issue 41, finding 1)', async (t) => {
        const { sovereign, genuine, sign, fresh, answerWith, ask } = await hostileSetup(t);
        const [a, b, c] = genuine as [any, any, any];
        const phi = 'Reads scans for patient Jane Smith, DOB 12/03/1980, NHS number 943 476 5919.';
        answerWith(async () => ({ signed_response: await sign(fresh([a, { ...b, description: phi }, { ...c, owner: { ...c.owner, operator: 'MRN 00482913' } }])) }));
        const { body, child } = await ask();
        assert.deepEqual(child, { registry_id: sovereign.id, status: 'ok', result_count: 1, error: '2 result(s) carrying protected health information dropped' });
        assert.ok(ids(body).includes(a.agent_id));
        assert.ok(!ids(body).includes(b.agent_id) && !ids(body).includes(c.agent_id));
        assert.ok(!JSON.stringify(body).includes('943 476 5919') && !JSON.stringify(body).includes('00482913'));
      });

      test('an answer that is stale, for another query, of another typ, signed by another key, unsigned or too large is refused; the rest still answers', async (t) => {
        const { root, atRoot, genuine, sign, fresh, answerWith, ask } = await hostileSetup(t);
        const control = await (async () => {
          answerWith(async () => ({ signed_response: await sign(fresh(genuine)) }));
          return ask();
        })();
        assert.equal(control.child.status, 'ok', 'control: the same answer, fresh and right, is used');
        assert.equal(control.child.result_count, 3);

        const cases: Array<[string, () => Promise<unknown>, RegExp]> = [
          ['stale', async () => ({ signed_response: await sign(fresh(genuine, { iat: Math.floor(Date.now() / 1000) - 3 * 60 })) }), /not fresh/],
          ['from the future', async () => ({ signed_response: await sign(fresh(genuine, { iat: Math.floor(Date.now() / 1000) + 5 * 60 })) }), /not fresh/],
          ['without iat', async () => ({ signed_response: await sign(fresh(genuine, { iat: undefined })) }), /not fresh/],
          ['another capability', async () => ({ signed_response: await sign(fresh(genuine, { query: { capability: 'triage.assess' } })) }), /another query/],
          ['another typ', async () => ({ signed_response: await sign(fresh(genuine), 'JWT') }), /ward-discovery\+jwt/],
          ['another key', async () => ({ signed_response: await root.app.ward.signer.sign(fresh(genuine), 'ward-discovery+jwt') }), /not signed by a key delegated/],
          ['unsigned', async () => fresh(genuine), /not signed/],
        ];
        for (const [name, body, reason] of cases) {
          answerWith(body);
          const { body: answer, child } = await ask();
          assert.equal(child.status, 'error', name);
          assert.match(child.error, reason, name);
          assert.equal(child.result_count, 0, name);
          assert.equal(answer.federation.partial, true, name);
          assert.deepEqual(ids(answer), [atRoot.agent_id], `${name}: the root's own agents still answer`);
        }
      });

      test('an answer larger than 4 MiB is cut off while streaming, with or without a declared length', async (t) => {
        const { atRoot, server, ask } = await hostileSetup(t);
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        for (const declared of [false, true]) {
          let written = 0;
          server.handle((_request, response) => {
            const total = 5 * 1024 * 1024;
            response.writeHead(200, { 'content-type': 'application/json', ...(declared ? { 'content-length': String(total) } : {}) });
            const more = () => {
              while (written < total) {
                written += chunk.length;
                if (!response.write(chunk)) return void response.once('drain', more);
              }
              response.end();
            };
            response.on('error', () => undefined);
            more();
          });
          const { body, child } = await ask();
          assert.equal(child.status, 'error', `content-length declared: ${declared}`);
          assert.match(child.error, /larger than 4194304 bytes/);
          assert.deepEqual(ids(body), [atRoot.agent_id]);
        }
      });
    });
  });
}
