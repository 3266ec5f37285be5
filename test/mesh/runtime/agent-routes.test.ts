import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { MeshAgent } from '../../../src/mesh/runtime/mesh-agent.ts';
import { listenAgent } from '../helpers.ts';

const agentWithRoute: MeshAgent = {
  info: { alias: 'routed', name: 'Routed', description: 'An agent adding a route', version: '0.0.1', skills: [] },
  routes: (app) => {
    app.get('/extra', async () => ({ extra: true }));
  },
};

describe('agent routes hook', () => {
  test('an agent can add its own HTTP route beside the runtime\'s', async (t) => {
    const { url } = await listenAgent(t, agentWithRoute);
    const response = await fetch(new URL('extra', url));
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { extra: true });
    assert.equal((await fetch(new URL('health', url))).status, 200);
  });

  test('unknown paths still answer the runtime\'s JSON-RPC 404', async (t) => {
    const { url } = await listenAgent(t, agentWithRoute);
    const response = await fetch(new URL('nowhere', url));
    assert.equal(response.status, 404);
    const body: any = await response.json();
    assert.equal(body.error.code, -32601);
  });
});
