import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import { systemClock } from '../../../../src/core/clock.ts';
import { createAvatarAgent } from '../../../../src/mesh/agents/avatar/avatar-agent.ts';
import { isLoopbackAddress } from '../../../../src/mesh/agents/avatar/dev-token.ts';
import type { MeshConfig } from '../../../../src/mesh/mesh-config.ts';
import { listenAgent, meshConfig, post } from '../../helpers.ts';

async function avatarWith(t: TestContext, config: MeshConfig) {
  return listenAgent(t, createAvatarAgent({ config, clock: systemClock }), { config });
}

describe('GET /dev/token', () => {
  test('with the default secret, a loopback caller gets a short-lived token the mesh accepts', async (t) => {
    const { url } = await avatarWith(t, meshConfig(t));
    const response = await fetch(new URL('dev/token', url));
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    const body: any = await response.json();
    assert.equal(body.sub, 'did:web:localhost:agents:dev-browser');
    assert.equal(body.expires_in, 300);
    const call = await post(url, { jsonrpc: '2.0', id: 1, method: 'avatar/get_status', params: { session_id: 'none' } }, {
      authorization: `Bearer ${body.token}`,
      'x-agent-id': body.sub,
      'content-type': 'application/json',
    });
    assert.equal(call.status, 200);
    assert.equal(call.body.error.code, -32013, 'authenticated: the call reached the method');
  });

  test('the token never outlives MESH_JWT_MAX_TTL', async (t) => {
    const { url } = await avatarWith(t, meshConfig(t, { MESH_JWT_MAX_TTL: '60' }));
    const body: any = await (await fetch(new URL('dev/token', url))).json();
    assert.equal(body.expires_in, 60);
  });

  test('with any other secret the route does not exist (404)', async (t) => {
    const { url } = await avatarWith(t, meshConfig(t, { MESH_JWT_SECRET: 'a-real-secret-that-is-not-the-default' }));
    assert.equal((await fetch(new URL('dev/token', url))).status, 404);
  });

  test('a caller that is not on the loopback interface is refused with 403', async (t) => {
    const { app } = await avatarWith(t, meshConfig(t));
    const remote = await app.inject({ method: 'GET', url: '/dev/token', remoteAddress: '192.0.2.10' });
    assert.equal(remote.statusCode, 403);
    assert.equal(remote.json().error.data.reason, 'not_loopback');
    assert.ok(!remote.body.includes('token"'), 'no token in the refusal');
  });

  test('a loopback connection relaying for someone else (a proxy) is refused with 403', async (t) => {
    const { url } = await avatarWith(t, meshConfig(t));
    assert.equal((await fetch(new URL('dev/token', url), { headers: { 'x-forwarded-for': '192.0.2.10' } })).status, 403);
  });

  test('loopback means 127.0.0.0/8, ::1 and their IPv4-mapped form, nothing else', () => {
    for (const address of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1']) assert.equal(isLoopbackAddress(address), true, address);
    for (const address of ['10.0.0.1', '::ffff:10.0.0.1', '0.0.0.0', '128.0.0.1', undefined]) assert.equal(isLoopbackAddress(address), false, String(address));
  });
});
