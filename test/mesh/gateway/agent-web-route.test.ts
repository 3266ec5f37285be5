/**
 * The pass-through to an agent's own HTTP routes (`/rpc/{alias}/<path>`) holds the whole request to
 * the gateway's PHI guard, with a real agent process behind it: the decoded query and path (not only
 * the headers and a JSON body), and a body the guard cannot read (not JSON) is refused 415 rather than
 * passed on unscanned (docs/mesh.md). A refused request never starts the agent; a clean one reaches it
 * (the probe has no such routes: its own 404 shows the request arrived).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentHealth, startTestGateway } from './gateway-helpers.ts';

type Answer = { status: number; body: any };

async function send(url: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(url, init);
  return { status: response.status, body: await response.json() };
}

describe('gateway: the agent pass-through and the PHI guard', () => {
  test('health data in the query or the path is refused as in a body; a non-JSON body is refused 415; none of them starts the agent', async (t) => {
    t.mock.method(console, 'debug', () => {});
    const gateway = await startTestGateway(t, { probe: { entry: 'probe' } });
    const base = `${gateway.url}/rpc/probe`;
    const phiRefused = (answer: Answer, where: { in?: string; pointer: string }) => {
      assert.equal(answer.status, 422, JSON.stringify(answer.body));
      assert.equal(answer.body.jsonrpc, '2.0');
      assert.equal(answer.body.error.code, -32012);
      assert.ok(
        answer.body.error.data.findings.some((finding: any) => finding.detector === 'uk_nhs_number' && finding.in === where.in && finding.pointer === where.pointer),
        JSON.stringify(answer.body.error.data.findings),
      );
      assert.ok(!JSON.stringify(answer.body).includes('5919'), 'the value is never repeated');
    };

    // The body case, as before: the reference the others are held to.
    phiRefused(await send(`${base}/notes`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'NHS number 943 476 5919' }) }), { pointer: '/text' });
    // The query, decoded (a space percent-encoded, and `+`), and the path.
    phiRefused(await send(`${base}/notes?patient=943%20476%205919`), { in: 'query', pointer: '/patient' });
    phiRefused(await send(`${base}/notes?q=NHS+943+476+5919&page=2`), { in: 'query', pointer: '/q' });
    phiRefused(await send(`${base}/patients/9434765919/notes`), { in: 'path', pointer: '' });
    phiRefused(await send(`${base}/patients/943%20476%205919`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }), { in: 'path', pointer: '' });

    // A body the guard cannot read is refused, with or without health data in it.
    for (const [contentType, body] of [
      ['text/plain', 'NHS number 943 476 5919'],
      ['text/plain;charset=UTF-8', 'hello'],
      ['application/x-www-form-urlencoded', 'text=hello'],
      ['application/octet-stream', '{"text":"hello"}'],
    ] as const) {
      const refused = await send(`${base}/tts`, { method: 'POST', headers: { 'content-type': contentType }, body });
      assert.equal(refused.status, 415, contentType);
      assert.equal(refused.body.error.code, -32600);
      assert.match(refused.body.error.data.reason, /not JSON/);
    }
    const malformed = await send(`${base}/tts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"text": ' });
    assert.deepEqual([malformed.status, malformed.body.error.code], [400, -32700]);
    assert.equal((await agentHealth(gateway, 'probe')).state, 'stopped', 'nothing refused reached the agent, which was never started');

    // Clean requests reach the agent: a query, a path, a JSON body (+json too), an empty POST.
    for (const [url, init] of [
      [`${base}/notes?q=headache&page=2`, {}],
      [`${base}/notes`, { method: 'POST', headers: { 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify({ text: 'a headache since Tuesday' }) }],
      [`${base}/notes`, { method: 'POST', headers: { 'content-type': 'application/merge-patch+json' }, body: '{}' }],
      [`${base}/notes`, { method: 'POST' }],
    ] as const) {
      const reached = await send(url, init);
      assert.equal(reached.status, 404, `${url} ${JSON.stringify(reached.body)}`);
      assert.equal(reached.body.error.code, -32601, 'the agent’s own answer for a path it does not have');
    }
    assert.equal((await agentHealth(gateway, 'probe')).state, 'running');
  });

  test('with the guard off (GATEWAY_PHI_GUARD=false) the pass-through scans and refuses nothing', async (t) => {
    t.mock.method(console, 'debug', () => {});
    const gateway = await startTestGateway(t, { probe: { entry: 'probe' } }, { env: { GATEWAY_PHI_GUARD: 'false' } });
    const reached = await send(`${gateway.url}/rpc/probe/notes?patient=943%20476%205919`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello' });
    assert.deepEqual([reached.status, reached.body.error.code], [404, -32601]);
  });
});
