/**
 * An agent at the root of a listener of its own (`GATEWAY_ROOT_LISTENERS`): the card at the host's
 * root naming that root as the agent's URL, JSON-RPC at the card's URL, lazy start unchanged (nothing
 * runs until the first request that needs the agent), the gateway's authentication, and every other
 * path refused by the listener in the gateway's JSON-RPC envelope. Real child processes.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import WebSocket from 'ws';
import { ConfigError } from '../../../src/core/env-schema.ts';
import { loadMeshConfig, rootListenerPorts } from '../../../src/mesh/mesh-config.ts';
import { authHeaders } from '../helpers.ts';
import { agentHealth, startTestGateway } from './gateway-helpers.ts';

describe('gateway root listeners', () => {
  test('the card at the root, JSON-RPC at its URL, the agent started on first use', async (t) => {
    const gateway = await startTestGateway(t, { probe: { entry: 'probe' }, other: { entry: 'probe' } }, { env: { GATEWAY_ROOT_LISTENERS: 'probe=0' } });
    const root = gateway.rootUrls.get('probe') as string;
    assert.match(root, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    assert.notEqual(new URL(root).port, new URL(gateway.url).port);
    assert.equal(gateway.rootUrls.has('other'), false, 'only the agents named get a listener');

    // Health at the root is the gateway's view: the agent is not started for it.
    const health = await fetch(new URL('health', root));
    assert.equal(health.status, 200);
    assert.equal(((await health.json()) as { state: string }).state, 'stopped');
    assert.equal((await agentHealth(gateway, 'probe')).starts, 0, 'lazy: nothing started yet');

    const cardAnswer = await fetch(new URL('.well-known/agent-card.json', root));
    assert.equal(cardAnswer.status, 200);
    const card = (await cardAnswer.json()) as { url: string; supportedInterfaces: { url: string }[] };
    assert.equal(card.url, root, "the card names the listener's root");
    assert.ok(card.supportedInterfaces.every((entry) => entry.url === root));
    assert.equal((await agentHealth(gateway, 'probe')).state, 'running', 'the first card read started it');
    // The card's signature names its key on the card's own origin: the listener serves it there.
    const signed = card as unknown as { signatures: { protected: string }[] };
    const { jku } = JSON.parse(Buffer.from(signed.signatures[0]!.protected, 'base64url').toString()) as { jku: string };
    assert.equal(new URL(jku).origin, new URL(root).origin);
    const keys = await fetch(jku);
    assert.equal(keys.status, 200, `the card's jku ${jku} answers at the root`);
    assert.ok(((await keys.json()) as { keys: unknown[] }).keys.length > 0);

    const call = await fetch(card.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(await authHeaders()) },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'probe/info', params: {} }),
    });
    assert.equal(call.status, 200);
    const answer = (await call.json()) as { id: number; result: { alias: string } };
    assert.equal(answer.id, 7);
    assert.equal(answer.result.alias, 'probe');

    const anonymous = await fetch(card.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'probe/info', params: {} }) });
    assert.equal(anonymous.status, 401, 'the gateway authenticates at the root too');
    assert.match(anonymous.headers.get('www-authenticate') ?? '', /^Bearer/);

    // The WebSocket at /ws of the root.
    const headers = await authHeaders();
    const socket = new WebSocket(`${root.replace(/^http/, 'ws')}ws`, { headers });
    t.after(() => socket.terminate());
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
  });

  test('the first request at the root that needs the agent starts it: JSON-RPC before any card read', async (t) => {
    const gateway = await startTestGateway(t, { probe: { entry: 'probe' } }, { env: { GATEWAY_ROOT_LISTENERS: 'probe=0' } });
    const root = gateway.rootUrls.get('probe') as string;
    assert.equal((await agentHealth(gateway, 'probe')).state, 'stopped');
    const call = await fetch(root, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(await authHeaders()) },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'probe/info', params: {} }),
    });
    assert.equal(((await call.json()) as { result: { alias: string } }).result.alias, 'probe');
    assert.match(call.headers.get('server-timing') ?? '', /agent-start/);
    const agent = await agentHealth(gateway, 'probe');
    assert.equal(agent.state, 'running');
    assert.equal(agent.starts, 1);
  });

  test('every other path is refused by the listener, in the JSON-RPC envelope, without starting the agent', async (t) => {
    const gateway = await startTestGateway(t, { probe: { entry: 'probe' } }, { env: { GATEWAY_ROOT_LISTENERS: 'probe=0' } });
    const root = gateway.rootUrls.get('probe') as string;
    const refusals: [string, string][] = [
      ['GET', ''],
      ['GET', 'tasks'],
      ['GET', 'rpc/probe/.well-known/agent-card.json'],
      ['POST', 'rpc/probe/'],
      ['POST', 'health'],
      ['GET', 'avatar'],
      ['DELETE', '.well-known/agent-card.json'],
    ];
    for (const [method, path] of refusals) {
      const response = await fetch(new URL(path, root), { method });
      assert.equal(response.status, 404, `${method} /${path}`);
      assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
      const body = (await response.json()) as { jsonrpc: string; id: null; error: { code: number; message: string } };
      assert.equal(body.jsonrpc, '2.0');
      assert.equal(body.id, null);
      assert.equal(body.error.code, -32601, `${method} /${path}`);
      assert.match(body.error.message, /presents the agent probe/);
    }
    const upgrade = new WebSocket(`${root.replace(/^http/, 'ws')}elsewhere`, { headers: await authHeaders() });
    const status = await new Promise<number | undefined>((resolve) => {
      upgrade.once('unexpected-response', (_request, response) => resolve(response.statusCode));
      upgrade.once('error', () => resolve(undefined));
    });
    assert.equal(status, 404);
    assert.equal((await agentHealth(gateway, 'probe')).starts, 0, 'no refused request started the agent');
  });

  test('bad settings are refused, naming the variable', async (t) => {
    assert.throws(() => loadMeshConfig({ GATEWAY_ROOT_LISTENERS: 'probe' }), (error: unknown) => error instanceof ConfigError && /GATEWAY_ROOT_LISTENERS/.test(error.message));
    assert.throws(() => loadMeshConfig({ GATEWAY_ROOT_LISTENERS: 'a=8200,b=8200' }), /both use port 8200/);
    assert.throws(() => loadMeshConfig({ GATEWAY_ROOT_LISTENERS: 'a=1,a=2' }), /named twice/);
    assert.throws(() => loadMeshConfig({ GATEWAY_ROOT_LISTENERS: 'a=70000' }), /over 65535/);
    assert.throws(() => loadMeshConfig({ GATEWAY_PORT: '8100', GATEWAY_ROOT_LISTENERS: 'a=8100' }), /gateway's own/);
    assert.deepEqual([...rootListenerPorts(loadMeshConfig({ GATEWAY_ROOT_LISTENERS: 'a=0,b=0,c=9000' }))], [['a', 0], ['b', 0], ['c', 9000]]);
    await assert.rejects(startTestGateway(t, { probe: { entry: 'probe' } }, { env: { GATEWAY_ROOT_LISTENERS: 'nobody=0' } }), /GATEWAY_ROOT_LISTENERS.*nobody is not an agent of the manifest|nobody is not an agent of the manifest/);
  });
});
