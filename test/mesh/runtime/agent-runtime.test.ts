import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SignJWT, base64url, generateKeyPair } from 'jose';
import type { ConsentChecker } from '../../../src/mesh/runtime/consent-requirement.ts';
import { createEchoAgent } from '../fixtures/echo-agent.ts';
import { CALLER, SECRET, authHeaders, eventually, listenAgent, meshConfig, post, rpc, textMessage, token } from '../helpers.ts';

const nowS = () => Math.floor(Date.now() / 1000);
const sign = (claims: Record<string, unknown>, secret = SECRET, alg = 'HS256') =>
  new SignJWT(claims).setProtectedHeader({ alg, typ: 'JWT' }).sign(new TextEncoder().encode(secret));
const good = () => ({ sub: CALLER, scope: 'mesh:invoke', iat: nowS() - 5, exp: nowS() + 300 });
const call = { jsonrpc: '2.0', id: 1, method: 'echo/say', params: { text: 'hi' } };

describe('agent runtime over HTTP: JSON-RPC conformance', () => {
  test('a request is answered with HTTP 200 and its result', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    const answer = await post(url, call, await authHeaders());
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body.result.text, 'hi');
    assert.equal(answer.body.result.caller, CALLER);
    assert.equal(answer.body.id, 1);
  });

  const codes: [string, string | unknown, number][] = [
    ['-32700 for a body that is not JSON', '{"jsonrpc": "2.0", "method"', -32700],
    ['-32600 for an envelope that is not JSON-RPC 2.0', { jsonrpc: '1.0', id: 1, method: 'echo/say' }, -32600],
    ['-32601 for an unknown method', { jsonrpc: '2.0', id: 1, method: 'echo/unknown' }, -32601],
    ['-32602 for params that do not fit', { jsonrpc: '2.0', id: 1, method: 'echo/say', params: { text: 3 } }, -32602],
    ['-32603 for an unexpected failure, without detail', { jsonrpc: '2.0', id: 1, method: 'echo/fail' }, -32603],
    ['-32002 for an unknown task', { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { task_id: 'nope' } }, -32002],
    ['-32003 when consent is missing', { jsonrpc: '2.0', id: 1, method: 'echo/patient', params: { patient_ref: 'Patient/p1' } }, -32003],
  ];
  for (const [name, payload, code] of codes) {
    test(`${name}, with HTTP 200`, async (t) => {
      const { url } = await listenAgent(t, createEchoAgent());
      const answer = await post(url, payload, await authHeaders());
      assert.equal(answer.status, 200);
      assert.equal(answer.body.error.code, code, JSON.stringify(answer.body));
      assert.doesNotMatch(JSON.stringify(answer.body), /internal detail/);
    });
  }

  test('-32004 when canceling a finished task', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    const sent = await rpc(url, 'tasks/send', { message: textMessage('x') });
    await eventually(async () => ((await rpc(url, 'tasks/get', { task_id: sent.result.task_id })).result.status.state === 'completed' ? true : undefined), 'completed');
    const answer = await rpc(url, 'tasks/cancel', { task_id: sent.result.task_id });
    assert.equal(answer.error.code, -32004);
  });

  test('the consent requirement lets the call through once consent exists, and asks about the authenticated caller', async (t) => {
    const asked: unknown[] = [];
    const consent: ConsentChecker = { isGranted: async (query) => (asked.push(query), query.patient_ref === 'Patient/ok') };
    const { url } = await listenAgent(t, createEchoAgent(), { consent });
    assert.deepEqual((await rpc(url, 'echo/patient', { patient_ref: 'Patient/ok' })).result, { seen: 'Patient/ok' });
    assert.equal((await rpc(url, 'echo/patient', { patient_ref: 'Patient/other' })).error.code, -32003);
    assert.deepEqual((await rpc(url, 'echo/patient', {})).result, { seen: null }, 'no patient, no check');
    assert.deepEqual(asked[0], { patient_ref: 'Patient/ok', purpose: 'treatment', requester: CALLER });
  });

  test('a batch is answered as an array; notifications get no entry; only notifications: 204', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    const headers = await authHeaders();
    const batch = await post(url, [call, { jsonrpc: '2.0', method: 'echo/say', params: { text: 'n' } }, { ...call, id: 2 }], headers);
    assert.deepEqual(batch.body.map((entry: any) => entry.id), [1, 2]);
    const silent = await post(url, { jsonrpc: '2.0', method: 'echo/say', params: { text: 'n' } }, headers);
    assert.equal(silent.status, 204);
    assert.equal(silent.body, undefined);
  });

  test('a JSON body is read whatever its content type says', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    const answer = await post(url, call, { ...(await authHeaders()), 'content-type': 'text/plain' });
    assert.equal(answer.body.result.text, 'hi');
  });
});

describe('agent runtime over HTTP: authentication failures are HTTP 401 with -32001', () => {
  const cases: [string, () => Promise<Record<string, string>>, string][] = [
    ['no Authorization header', async () => ({ 'x-agent-id': CALLER }), 'missing_token'],
    ['no X-Agent-ID header', async () => ({ authorization: `Bearer ${await token()}` }), 'missing_agent_id'],
    ['an X-Agent-ID other than sub', async () => ({ authorization: `Bearer ${await token()}`, 'x-agent-id': 'did:web:localhost:agents:other' }), 'agent_id_mismatch'],
    ['a forged token', async () => ({ authorization: `Bearer ${await sign(good(), 'not-the-mesh-secret-at-all')}`, 'x-agent-id': CALLER }), 'bad_signature'],
    ['an expired token', async () => ({ authorization: `Bearer ${await sign({ ...good(), iat: nowS() - 600, exp: nowS() - 60 })}`, 'x-agent-id': CALLER }), 'expired'],
    ['a token living longer than MESH_JWT_MAX_TTL', async () => ({ authorization: `Bearer ${await sign({ ...good(), exp: nowS() + 7200 })}`, 'x-agent-id': CALLER }), 'lifetime_too_long'],
    ['a token without mesh:invoke', async () => ({ authorization: `Bearer ${await sign({ ...good(), scope: 'registry:read' })}`, 'x-agent-id': CALLER }), 'missing_scope'],
    [
      'alg none',
      async () => ({
        authorization: `Bearer ${base64url.encode(JSON.stringify({ alg: 'none' }))}.${base64url.encode(JSON.stringify(good()))}.`,
        'x-agent-id': CALLER,
      }),
      'alg_not_allowed',
    ],
    [
      'RS256',
      async () => {
        const { privateKey } = await generateKeyPair('RS256');
        return { authorization: `Bearer ${await new SignJWT(good()).setProtectedHeader({ alg: 'RS256' }).sign(privateKey)}`, 'x-agent-id': CALLER };
      },
      'alg_not_allowed',
    ],
  ];
  for (const [name, headers, reason] of cases) {
    test(`${name} is refused (${reason})`, async (t) => {
      const { url } = await listenAgent(t, createEchoAgent());
      const answer = await post(url, call, { 'content-type': 'application/json', ...(await headers()) });
      assert.equal(answer.status, 401);
      assert.match(answer.headers.get('www-authenticate') ?? '', /^Bearer/);
      assert.equal(answer.body.jsonrpc, '2.0');
      assert.equal(answer.body.id, null);
      assert.equal(answer.body.error.code, -32001);
      assert.equal(answer.body.error.data.reason, reason);
    });
  }
});

describe('agent runtime: health, card, tasks', () => {
  test('GET /health answers name, alias, status, version and uptime without credentials', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    const health: any = await (await fetch(`${url}health`)).json();
    assert.equal(health.name, 'Echo test agent');
    assert.equal(health.alias, 'echo');
    assert.equal(health.status, 'ok');
    assert.equal(health.version, '9.9.9');
    assert.equal(typeof health.uptime_s, 'number');
  });

  test('the capability card (asked for as A2A 0.3, the contract\'s) lists methods, skills, transports and the authentication requirements', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    const card: any = await (await fetch(`${url}.well-known/agent-card.json`, { headers: { 'a2a-version': '0.3' } })).json();
    for (const field of ['name', 'description', 'url', 'version', 'protocol', 'methods', 'skills', 'transports', 'authentication', 'capabilities']) {
      assert.ok(field in card, field);
    }
    assert.equal(card.protocol, 'mesh-a2a-jsonrpc');
    for (const method of ['tasks/send', 'tasks/get', 'tasks/cancel', 'tasks/sendSubscribe', 'tasks/resubscribe', 'message/send', 'message/stream', 'echo/say']) {
      assert.ok(card.methods.includes(method), method);
    }
    assert.deepEqual(card.skills.map((skill: { id: string }) => skill.id), ['test.echo']);
    assert.deepEqual(card.transports.map((transport: { type: string }) => transport.type), ['jsonrpc', 'sse', 'websocket']);
    assert.deepEqual(card.authentication.algorithms, ['HS256']);
    assert.equal(card.authentication.required_scope, 'mesh:invoke');
  });

  test('a body over 1 MiB is refused with 413 in a JSON-RPC envelope', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    const answer = await post(url, { jsonrpc: '2.0', id: 1, method: 'echo/say', params: { text: 'x'.repeat(1024 * 1024) } }, await authHeaders());
    assert.equal(answer.status, 413);
    assert.equal(answer.body.jsonrpc, '2.0');
    assert.equal(answer.body.error.code, -32600);
  });

  test('an unknown path is a JSON-RPC envelope, not a bare HTTP error', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    const response = await fetch(`${url}nowhere`, { method: 'POST' });
    assert.equal(response.status, 404);
    assert.equal(((await response.json()) as any).jsonrpc, '2.0');
  });

  test('tasks/send answers {task_id, status: "submitted"}; tasks/get answers the contract\'s task shape', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    const sent = await rpc(url, 'tasks/send', { sender: CALLER, recipient: 'did:web:localhost:agents:echo', message: textMessage('hello') });
    assert.deepEqual(Object.keys(sent.result).sort(), ['status', 'task_id']);
    assert.equal(sent.result.status, 'submitted');
    assert.match(sent.result.task_id, /^[0-9a-f-]{36}$/);
    const done = await eventually(async () => {
      const got = await rpc(url, 'tasks/get', { task_id: sent.result.task_id });
      return got.result.status.state === 'completed' ? got.result : undefined;
    }, 'completion');
    assert.equal(done.task_id, sent.result.task_id);
    assert.equal(done.sender, CALLER);
    assert.equal(done.recipient, 'did:web:localhost:agents:echo');
    assert.match(done.status.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(done.status.message.parts[0].text, 'echo: hello');
    assert.deepEqual(done.history.map((message: { role: string }) => message.role), ['user', 'agent']);
    assert.equal(done.artifacts[0].parts[0].text, 'hello');
  });

  test('tasks/send with a sender other than the authenticated agent is -32602', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    assert.equal((await rpc(url, 'tasks/send', { sender: 'did:web:elsewhere', message: textMessage('x') })).error.code, -32602);
  });

  test('a message that is not a Mesh Message (kind, role, parts) is -32602', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    assert.equal((await rpc(url, 'tasks/send', { message: { role: 'user', parts: [{ kind: 'text', text: 'x' }] } })).error.code, -32602);
    assert.equal((await rpc(url, 'tasks/send', { message: { kind: 'message', role: 'robot', parts: [{ kind: 'text', text: 'x' }] } })).error.code, -32602);
    assert.equal((await rpc(url, 'tasks/send', { message: { kind: 'message', role: 'user', parts: [] } })).error.code, -32602);
  });

  test('tasks outlive the agent: after a restart on the same data directory tasks/get still answers', async (t) => {
    const config = meshConfig(t);
    const first = await listenAgent(t, createEchoAgent(), { config });
    const sent = await rpc(first.url, 'tasks/send', { message: textMessage('ask') });
    await eventually(async () => ((await rpc(first.url, 'tasks/get', { task_id: sent.result.task_id })).result.status.state === 'input-required' ? true : undefined), 'input-required');
    await first.app.close();
    const second = await listenAgent(t, createEchoAgent(), { config });
    const got = await rpc(second.url, 'tasks/get', { task_id: sent.result.task_id });
    assert.equal(got.result.status.state, 'input-required');
    const answered = await rpc(second.url, 'tasks/send', { task_id: sent.result.task_id, message: textMessage('more') });
    assert.equal(answered.result.status, 'working');
  });
});
