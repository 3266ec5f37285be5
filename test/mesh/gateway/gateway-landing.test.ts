/**
 * The gateway's landing and method refusals (issue 46): `GET /` lists the agents and links instead of
 * a 404; a method other than POST on the JSON-RPC address `/rpc/{alias}` is 405 with `Allow: POST`
 * in the JSON-RPC envelope, and an unknown alias stays 404 AGENT_UNKNOWN. Nothing here starts an agent.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentHealth, startTestGateway } from './gateway-helpers.ts';

describe('gateway landing and 405', () => {
  test('GET / lists each agent with its JSON-RPC address and card, and the health and task links', async (t) => {
    const gateway = await startTestGateway(t, { probe: { entry: 'probe' } });
    const response = await fetch(`${gateway.url}/`);
    assert.equal(response.status, 200);
    const body = (await response.json()) as any;
    assert.equal(body.service, 'Ward mesh gateway');
    const origin = new URL(gateway.url).origin;
    assert.deepEqual(body.agents, [{ alias: 'probe', state: 'stopped', rpc: `${origin}/rpc/probe/`, card: `${origin}/rpc/probe/.well-known/agent-card.json` }]);
    assert.equal(body.links.health, `${origin}/health`);
    assert.equal((await fetch(body.links.health)).status, 200, 'the links work');
    assert.equal((await agentHealth(gateway, 'probe')).starts, 0, 'the landing started nothing');
  });

  test('GET, PUT, DELETE on /rpc/{alias} are 405 with Allow: POST; an unknown alias is 404', async (t) => {
    const gateway = await startTestGateway(t, { probe: { entry: 'probe' } });
    for (const [method, path] of [['GET', '/rpc/probe'], ['PUT', '/rpc/probe'], ['DELETE', '/rpc/probe/'], ['PATCH', '/rpc/probe/']] as const) {
      const response = await fetch(`${gateway.url}${path}`, { method });
      assert.equal(response.status, 405, `${method} ${path}`);
      assert.equal(response.headers.get('allow'), 'POST');
      const body = (await response.json()) as any;
      assert.equal(body.jsonrpc, '2.0');
      assert.equal(body.id, null);
      assert.equal(body.error.code, -32600);
      assert.match(body.error.message, new RegExp(`^${method} is not accepted here: /rpc/probe takes JSON-RPC 2.0 requests by POST`));
    }
    const unknown = await fetch(`${gateway.url}/rpc/nosuch`);
    assert.equal(unknown.status, 404);
    assert.equal(((await unknown.json()) as any).error.code, -32010);
    // POST is still the JSON-RPC address (refused here only for want of a token).
    const post = await fetch(`${gateway.url}/rpc/probe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.notEqual(post.status, 405);
    assert.equal((await agentHealth(gateway, 'probe')).starts, 0);
  });
});
