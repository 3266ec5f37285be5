/**
 * What the gateway does with a request (contract §10, spec rules 1 and 2): it authenticates every
 * request itself, answers its own failures as JSON-RPC envelopes (-32001, -32010, -32011, -32012),
 * forwards JSON-RPC, SSE and WebSocket, and propagates W3C trace context.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { WebSocket } from 'ws';
import { CALLER, authHeaders, eventually, post, rpc, sseReader, textMessage, token } from '../helpers.ts';
import { agentHealth, gatewayHealth, startTestGateway } from './gateway-helpers.ts';

describe('gateway: forwarding', () => {
  test('an unauthenticated request is 401 with -32001 and starts nothing', async (t) => {
    const gateway = await startTestGateway(t, { probe: { entry: 'probe' } });
    const answer = await post(`${gateway.url}/rpc/probe`, { jsonrpc: '2.0', id: 1, method: 'probe/info' }, { 'content-type': 'application/json', 'x-agent-id': CALLER });
    assert.equal(answer.status, 401);
    assert.equal(answer.body.error.code, -32001);
    const expired = await post(
      `${gateway.url}/rpc/probe`,
      { jsonrpc: '2.0', id: 1, method: 'probe/info' },
      { authorization: `Bearer ${await token(CALLER, { secret: 'some-other-secret-entirely-32bytes' })}`, 'x-agent-id': CALLER },
    );
    assert.equal(expired.status, 401);
    assert.equal((await agentHealth(gateway, 'probe')).state, 'stopped');
  });

  test('an unknown alias is -32010 in a JSON-RPC envelope with the request id; a batch gets one per request', async (t) => {
    const gateway = await startTestGateway(t, { probe: { entry: 'probe' } });
    const single = await post(`${gateway.url}/rpc/nobody`, { jsonrpc: '2.0', id: 'x1', method: 'probe/info' }, await authHeaders());
    assert.equal(single.status, 200);
    assert.deepEqual(single.body, { jsonrpc: '2.0', id: 'x1', error: { code: -32010, message: 'Agent unknown to the gateway', data: { alias: 'nobody' } } });
    const batch = await post(
      `${gateway.url}/rpc/nobody`,
      [{ jsonrpc: '2.0', id: 1, method: 'a' }, { jsonrpc: '2.0', method: 'b' }, { jsonrpc: '2.0', id: 2, method: 'c' }],
      await authHeaders(),
    );
    assert.deepEqual(batch.body.map((entry: any) => [entry.id, entry.error.code]), [[1, -32010], [2, -32010]]);
  });

  test('a payload carrying health data is refused with -32012 before any agent sees it (spec rule 1)', async (t) => {
    const gateway = await startTestGateway(t, { probe: { entry: 'probe' } });
    const answer = await rpc(`${gateway.url}/rpc/probe`, 'tasks/send', { message: textMessage('Patient NHS number 943 476 5919, DOB: 1970-01-01') });
    assert.equal(answer.error.code, -32012);
    assert.ok(answer.error.data.findings.length > 0);
    assert.doesNotMatch(JSON.stringify(answer), /943 476 5919/, 'the value is never echoed');
    assert.equal((await agentHealth(gateway, 'probe')).state, 'stopped');
  });

  test('health data in a header is refused with -32012 too, naming the header, never the value', async (t) => {
    const gateway = await startTestGateway(t, { probe: { entry: 'probe' } });
    const answer = await post(`${gateway.url}/rpc/probe`, { jsonrpc: '2.0', id: 7, method: 'probe/info' }, { ...(await authHeaders()), 'x-case-ref': 'MRN 00482913' });
    assert.equal(answer.body.error.code, -32012);
    assert.deepEqual(answer.body.error.data.findings, [{ detector: 'mrn', in: 'header', pointer: '/x-case-ref' }]);
    assert.doesNotMatch(JSON.stringify(answer.body), /00482913/);
    assert.equal((await agentHealth(gateway, 'probe')).state, 'stopped');
  });

  test('agent answers pass through unchanged, errors included (-32601 from the agent)', async (t) => {
    const gateway = await startTestGateway(t, { probe: { entry: 'probe' } });
    const answer = await rpc(`${gateway.url}/rpc/probe`, 'no/such/method', {});
    assert.equal(answer.error.code, -32601);
  });

  test('W3C traceparent is propagated: same trace id, a new parent span', async (t) => {
    const gateway = await startTestGateway(t, { probe: { entry: 'probe' } });
    const incoming = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const answer = await post(`${gateway.url}/rpc/probe`, { jsonrpc: '2.0', id: 1, method: 'probe/info' }, { ...(await authHeaders()), traceparent: incoming });
    const seen: string = answer.body.result.traceparent;
    assert.match(seen, /^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$/);
    assert.notEqual(seen.split('-')[2], '00f067aa0ba902b7');
    const fresh = (await rpc(`${gateway.url}/rpc/probe`, 'probe/info', {})).result.traceparent;
    assert.match(fresh, /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/, 'without one, a trace starts at the gateway');
  });

  test('a caller that leaves before the agent answers abandons the agent\'s request too', async (t) => {
    const gateway = await startTestGateway(t, { slow: { entry: 'slow-answer' } });
    const url = `${gateway.url}/rpc/slow`;
    await rpc(url, 'probe/exchanges', {});
    const leaving = new AbortController();
    const hang = fetch(url, { method: 'POST', headers: await authHeaders(), body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'probe/hang' }), signal: leaving.signal });
    hang.catch(() => undefined);
    await eventually(async () => ((await rpc(url, 'probe/exchanges', {})).result.hanging === 1 ? true : undefined), 'the agent taking the request');
    leaving.abort();
    const seen = await eventually(async () => {
      const counts = (await rpc(url, 'probe/exchanges', {})).result;
      return counts.abandoned === 1 ? counts : undefined;
    }, 'the agent seeing its request abandoned');
    assert.equal(seen.hanging, 1);
  });

  test('an agent that does not answer within GATEWAY_REQUEST_TIMEOUT_MS is -32011, and its request is abandoned', async (t) => {
    const gateway = await startTestGateway(t, { slow: { entry: 'slow-answer' } }, { env: { GATEWAY_REQUEST_TIMEOUT_MS: '1000' } });
    const url = `${gateway.url}/rpc/slow`;
    const answer = await post(url, { jsonrpc: '2.0', id: 'h', method: 'probe/hang' }, await authHeaders());
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body, { jsonrpc: '2.0', id: 'h', error: { code: -32011, message: 'The agent did not answer.', data: { alias: 'slow' } } });
    const seen = await eventually(async () => {
      const counts = (await rpc(url, 'probe/exchanges', {})).result;
      return counts.abandoned === 1 ? counts : undefined;
    }, 'the agent seeing its request abandoned');
    assert.equal(seen.hanging, 1);
  });

  test('the agent gets the request id the gateway logs the call under', async (t) => {
    const gateway = await startTestGateway(t, { slow: { entry: 'slow-answer' } });
    const answer = await post(`${gateway.url}/rpc/slow`, { jsonrpc: '2.0', id: 1, method: 'probe/exchanges' }, { ...(await authHeaders()), 'x-request-id': 'caller-chosen-42' });
    assert.deepEqual(answer.body.result.request_ids, ['caller-chosen-42']);
  });

  test('an SSE stream passes through event by event, to the final event', async (t) => {
    const gateway = await startTestGateway(t, { probe: { entry: 'probe' } });
    const response = await fetch(`${gateway.url}/rpc/probe`, {
      method: 'POST',
      headers: await authHeaders(),
      body: JSON.stringify({ jsonrpc: '2.0', id: 's', method: 'tasks/sendSubscribe', params: { message: textMessage('through') } }),
    });
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    const reader = sseReader(response);
    const events = [];
    for (let event = await reader.next(); event; event = await reader.next()) events.push(event);
    assert.equal(events.at(-1)?.data.result.status.state, 'completed');
    assert.equal(events.at(-1)?.data.result.final, true);
    assert.ok(events.every((event) => event.id !== undefined && event.data.id === 's'));
    assert.equal((await agentHealth(gateway, 'probe')).active_streams, 0, 'the stream is released when it ends');
  });

  test('a WebSocket is proxied to the agent\'s /ws, notifications included', async (t) => {
    const gateway = await startTestGateway(t, { probe: { entry: 'probe' } });
    const socket = new WebSocket(`${gateway.url.replace('http', 'ws')}/rpc/probe/ws`, {
      headers: { authorization: `Bearer ${await token()}`, 'x-agent-id': CALLER },
    });
    t.after(() => socket.close());
    const frames: any[] = [];
    const finished = new Promise<void>((resolve) => {
      socket.on('message', (data) => {
        const frame = JSON.parse(data.toString());
        frames.push(frame);
        if (frame.params?.final) resolve();
      });
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/send', params: { message: textMessage('ws') } }));
    await finished;
    assert.equal(frames[0].id, 1);
    assert.equal(frames[0].result.status, 'submitted');
    assert.equal(frames.at(-1).method, 'tasks/status');
    assert.equal(frames.at(-1).params.status.state, 'completed');
  });

  test('stopping the gateway closes a proxied WebSocket with 1012 and a reason to reconnect', async (t) => {
    const gateway = await startTestGateway(t, { probe: { entry: 'probe' } });
    const socket = new WebSocket(`${gateway.url.replace('http', 'ws')}/rpc/probe/ws`, {
      headers: { authorization: `Bearer ${await token()}`, 'x-agent-id': CALLER },
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    const closed = new Promise<{ code: number; reason: string }>((resolve) => socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    await gateway.close();
    assert.deepEqual(await closed, { code: 1012, reason: 'server shutting down; reconnect' });
  });

  test('an agent that dies under a proxied WebSocket closes it with 1011, not as a normal end', async (t) => {
    const gateway = await startTestGateway(t, { probe: { entry: 'probe' } });
    const socket = new WebSocket(`${gateway.url.replace('http', 'ws')}/rpc/probe/ws`, {
      headers: { authorization: `Bearer ${await token()}`, 'x-agent-id': CALLER },
    });
    t.after(() => socket.terminate());
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    const closed = new Promise<{ code: number; reason: string }>((resolve) => socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    const { pid } = await agentHealth(gateway, 'probe');
    process.kill(pid, 'SIGKILL');
    // The dropped connection reaches the gateway as a close without a frame or as a reset, by timing.
    const { code, reason } = await closed;
    assert.equal(code, 1011);
    assert.match(reason, /^agent connection (lost|failed)$/);
  });

  test('a WebSocket upgrade without credentials is refused before any agent starts', async (t) => {
    const gateway = await startTestGateway(t, { probe: { entry: 'probe' } });
    const socket = new WebSocket(`${gateway.url.replace('http', 'ws')}/rpc/probe/ws`);
    const status = await new Promise<number>((resolve) => {
      socket.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
      socket.once('error', () => undefined);
    });
    assert.equal(status, 401);
    assert.equal((await agentHealth(gateway, 'probe')).state, 'stopped');
  });

  test('GET /health lists every agent with its state, dependencies and log tail', async (t) => {
    const gateway = await startTestGateway(t, { base: { entry: 'probe' }, top: { entry: 'probe', dependencies: ['base'] } });
    await rpc(`${gateway.url}/rpc/base`, 'probe/info', {});
    const health = await gatewayHealth(gateway);
    assert.equal(health.status, 'ok');
    const byAlias = Object.fromEntries(health.agents.map((agent: any) => [agent.alias, agent]));
    assert.equal(byAlias.base.state, 'running');
    assert.equal(byAlias.top.state, 'stopped');
    assert.deepEqual(byAlias.top.dependencies, ['base']);
    assert.ok(byAlias.base.log_tail.some((line: string) => line.includes('agent listening')));
    assert.match(byAlias.base.log_file, /logs\/base\.log$/);
    const anonymous: any = await (await fetch(`${gateway.url}/health`)).json();
    assert.equal(anonymous.agents[0].state, 'running', 'states are public');
    assert.ok(anonymous.agents.every((agent: any) => !('log_tail' in agent)), 'log lines are not');
  });

  test('the agent\'s card is public through the gateway, with the gateway\'s URL (trailing slash) as its address', async (t) => {
    const gateway = await startTestGateway(t, { probe: { entry: 'probe' } });
    const anonymous = await fetch(`${gateway.url}/rpc/probe/.well-known/agent-card.json`, { headers: { 'a2a-version': '1.0' } });
    assert.equal(anonymous.status, 200, 'cards carry no secrets; A2A clients fetch them before they authenticate');
    const card: any = await anonymous.json();
    assert.equal(card.url, `${gateway.url}/rpc/probe/`);
    assert.equal(card.protocol, 'mesh-a2a-jsonrpc');
    assert.ok(card.securityRequirements, 'the A2A-Version header reaches the agent');
    const viaSlash = await rpc(`${gateway.url}/rpc/probe/`, 'probe/info', {});
    assert.equal(viaSlash.result.alias, 'probe');
    const unknown = await fetch(`${gateway.url}/rpc/nobody/.well-known/agent-card.json`);
    assert.equal(unknown.status, 404);
  });

  test('an unknown gateway path answers a JSON-RPC envelope', async (t) => {
    const gateway = await startTestGateway(t, { probe: { entry: 'probe' } });
    const response = await fetch(`${gateway.url}/elsewhere`, { method: 'POST', body: '{}' });
    assert.equal(response.status, 404);
    assert.equal(((await response.json()) as any).jsonrpc, '2.0');
  });
});
