/**
 * Protocol aliases (issue 46, docs/discovery.md "Protocol names"): an agent registered from an A2A
 * card has endpoints of protocol `a2a-jsonrpc`, the shipped mesh agents `mesh-a2a-jsonrpc`. Asking
 * discovery or routing for `a2a-jsonrpc` finds both (a mesh endpoint serves A2A JSON-RPC too); asking
 * for `mesh-a2a-jsonrpc` finds the mesh's alone. Both backends.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BACKENDS, buildTestRegistry, registerAgent } from '../../helpers/registry.ts';

const names = (body: { results: Array<{ display_name: string }> }) => body.results.map((result) => result.display_name).sort();

for (const backend of BACKENDS) {
  describe(`protocol aliases [${backend}]`, () => {
    test('a2a-jsonrpc finds card-registered and mesh agents; mesh-a2a-jsonrpc the mesh agents alone', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const skills = ['alias.check'];
      await registerAgent(registry, {
        display_name: 'From a card',
        endpoints: [{ url: 'https://card.example.org/a2a', protocol: 'a2a-jsonrpc', priority: 10 }],
        capabilities: { skills, protocols: [] },
      });
      await registerAgent(registry, {
        display_name: 'Mesh agent',
        endpoints: [{ url: 'https://mesh.example.org/rpc/x/', protocol: 'mesh-a2a-jsonrpc', priority: 10 }],
        capabilities: { skills, protocols: ['mesh-a2a-jsonrpc'] },
      });
      await registerAgent(registry, {
        display_name: 'FHIR only',
        endpoints: [{ url: 'https://fhir.example.org/fhir', protocol: 'fhir-rest', priority: 10 }],
        capabilities: { skills, protocols: ['fhir-rest'] },
      });
      const discover = async (protocol: string) => {
        const response = await registry.call({ method: 'GET', url: `/v1/discover?capability=alias.check&protocol=${protocol}` });
        assert.equal(response.status, 200, JSON.stringify(response.body));
        return names(response.body);
      };
      assert.deepEqual(await discover('a2a-jsonrpc'), ['From a card', 'Mesh agent']);
      assert.deepEqual(await discover('mesh-a2a-jsonrpc'), ['Mesh agent']);
      assert.deepEqual(await discover('fhir-rest'), ['FHIR only']);

      const route = async (protocol: string) => {
        const response = await registry.call({ method: 'POST', url: '/v1/route', payload: { capability: 'alias.check', protocol } });
        assert.equal(response.status, 200, JSON.stringify(response.body));
        return [response.body.selected.url, ...response.body.alternatives.map((endpoint: { url: string }) => endpoint.url)];
      };
      const viaAlias = await route('a2a-jsonrpc');
      assert.ok(viaAlias.every((url: string) => url !== 'https://fhir.example.org/fhir'), viaAlias.join());
      assert.ok(['https://card.example.org/a2a', 'https://mesh.example.org/rpc/x/'].includes(viaAlias[0]), viaAlias.join());
      assert.deepEqual(await route('mesh-a2a-jsonrpc'), ['https://mesh.example.org/rpc/x/']);
    });
  });
}
