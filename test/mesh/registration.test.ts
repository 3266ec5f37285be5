import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { meshAgentRegistrations } from '../../src/mesh/registration.ts';
import { buildTestRegistry, writeHeaders } from '../helpers/registry.ts';

describe('registry records of the shipped mesh agents', () => {
  test('one body per shipped agent, its endpoint at the gateway, its skills for discovery', () => {
    const bodies = meshAgentRegistrations({ gatewayUrl: 'http://127.0.0.1:8100/' });
    assert.deepEqual(bodies.map((body) => body.endpoints[0]?.url), ['http://127.0.0.1:8100/rpc/consent/', 'http://127.0.0.1:8100/rpc/triage/', 'http://127.0.0.1:8100/rpc/clinician_avatar/']);
    assert.deepEqual(bodies.map((body) => body.capabilities.skills), [['consent.verify'], ['triage.assess'], ['consultation.structured']]);
    for (const body of bodies) {
      assert.equal(body.endpoints[0]?.protocol, 'mesh-a2a-jsonrpc');
      assert.deepEqual(body.capabilities.protocols, ['mesh-a2a-jsonrpc']);
    }
    assert.deepEqual(meshAgentRegistrations({ gatewayUrl: 'http://gw', aliases: ['triage'] }).map((body) => body.display_name), ['Ward Triage Assistant']);
  });

  test('the registry accepts every body as it is', async (t) => {
    const registry = await buildTestRegistry(t, 'sqlite');
    for (const body of meshAgentRegistrations({ gatewayUrl: 'http://127.0.0.1:8100' })) {
      const response = await registry.call({ method: 'POST', url: '/v1/agents', headers: writeHeaders(), payload: body });
      assert.equal(response.status, 201, JSON.stringify(response.body));
      assert.deepEqual(response.body.capabilities.skills, body.capabilities.skills);
    }
  });
});
