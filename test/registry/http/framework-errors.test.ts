/**
 * Errors raised before a route runs get the error envelope too (issue 19, finding 4): Fastify's own
 * (a malformed percent-escape) and Node's HTTP parser's (control characters in a header, conflicting
 * Content-Length, a bad request line, headers over the limit). Sent over raw sockets to a listening
 * registry, since these never reach a route; nothing of the refused request is echoed.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { describe, test } from 'node:test';
import { startRegistries, testScope } from '../../helpers/listening.ts';
import { startConsoleFor } from '../../console/console-harness.ts';
import { createEchoAgent } from '../../mesh/fixtures/echo-agent.ts';
import { startTestGateway } from '../../mesh/gateway/gateway-helpers.ts';
import { listenAgent } from '../../mesh/helpers.ts';

/** Writes `raw` to the registry and returns everything it answers until it closes the connection. */
function exchange(port: number, raw: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(raw));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString()));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

function envelopeOf(answer: string): { status: number; contentType: string; body: { error: { code: string; message: string } } } {
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
  const contentType = /\r\ncontent-type: ([^\r]+)/i.exec(head)?.[1] ?? '';
  return { status, contentType, body: JSON.parse(body) };
}

describe('errors before routing are answered in the envelope', () => {
  test("Node's parser: control characters, conflicting Content-Length, a bad request line, headers over the limit", async (t) => {
    const [registry] = await startRegistries(testScope(t), 'sqlite');
    const port = Number(new URL((registry as { baseUrl: string }).baseUrl).port);
    const cases: Array<[string, string, number, string]> = [
      ['control character in a header', 'GET /v1/agents HTTP/1.1\r\nhost: x\r\nx-note: MRN\x01 00482913\r\n\r\n', 400, 'BAD_REQUEST'],
      ['conflicting Content-Length', 'POST /v1/agents HTTP/1.1\r\nhost: x\r\ncontent-length: 5\r\ncontent-length: 6\r\n\r\nhello', 400, 'BAD_REQUEST'],
      ['a bad request line', 'GET /v1/agents NHS-943-476-5919\r\n\r\n', 400, 'BAD_REQUEST'],
      ['headers over 16 KiB', `GET /v1/agents HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'HEADERS_TOO_LARGE'],
    ];
    for (const [name, raw, status, code] of cases) {
      const answer = await exchange(port, raw);
      const parsed = envelopeOf(answer);
      assert.equal(parsed.status, status, name);
      assert.equal(parsed.contentType, 'application/json; charset=utf-8', name);
      assert.equal(parsed.body.error.code, code, name);
      assert.doesNotMatch(answer, /00482913|943-476-5919|aaaaaaaa/, `${name}: nothing of the request is echoed`);
    }
  });

  test('under /fhir the same refusals are OperationOutcomes (issue 41, finding 6); elsewhere still the envelope', async (t) => {
    const [registry] = await startRegistries(testScope(t), 'sqlite');
    const port = Number(new URL((registry as { baseUrl: string }).baseUrl).port);
    const cases: Array<[string, string, number, string]> = [
      ['headers over 16 KiB on /fhir/Device', `GET /fhir/Device?name=x HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'HEADERS_TOO_LARGE'],
      ['headers over 16 KiB on /fhir/metadata', `GET /fhir/metadata HTTP/1.1\r\nhost: x\r\nx-pad: ${'a'.repeat(40_000)}\r\n\r\n`, 431, 'HEADERS_TOO_LARGE'],
      ['control character on /fhir', 'GET /fhir/Device HTTP/1.1\r\nhost: x\r\nx-note: MRN\x01 00482913\r\n\r\n', 400, 'BAD_REQUEST'],
    ];
    for (const [name, raw, status, code] of cases) {
      const answer = await exchange(port, raw);
      const [head = '', body = ''] = answer.split('\r\n\r\n');
      assert.equal(Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), status, name);
      assert.match(head, /\r\ncontent-type: application\/fhir\+json; charset=utf-8/i, name);
      const outcome = JSON.parse(body);
      assert.equal(outcome.resourceType, 'OperationOutcome', name);
      assert.equal(outcome.issue[0].details.coding[0].code, code, name);
      assert.doesNotMatch(answer, /00482913|aaaaaaaa/, `${name}: nothing of the request is echoed`);
    }
    // A path that only starts like the surface is not in it.
    const other = envelopeOf(await exchange(port, `GET /fhirx HTTP/1.1\r\nhost: x\r\nx-pad: ${'a'.repeat(20_000)}\r\n\r\n`));
    assert.equal(other.status, 431);
    assert.equal(other.body.error.code, 'HEADERS_TOO_LARGE');
  });

  test('a malformed percent-escape is 400 BAD_REQUEST without the URL; OPTIONS without Origin is not a plain-text error', async (t) => {
    const [registry] = await startRegistries(testScope(t), 'sqlite');
    const base = (registry as { baseUrl: string }).baseUrl;
    const port = Number(new URL(base).port);
    const answer = await exchange(port, 'GET /v1/agents/NHS%20943%20476%205919%zz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n');
    const parsed = envelopeOf(answer);
    assert.equal(parsed.status, 400);
    assert.equal(parsed.body.error.code, 'BAD_REQUEST');
    assert.doesNotMatch(answer, /943/);
    const options = await fetch(`${base}/v1/agents`, { method: 'OPTIONS' });
    assert.equal(options.status, 204);
    const preflight = await fetch(`${base}/v1/agents`, {
      method: 'OPTIONS',
      headers: { origin: 'http://127.0.0.1:3000', 'access-control-request-method': 'POST' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), 'http://127.0.0.1:3000');
  });

  test('the gateway, an agent and the console answer the same refusals in their own format, echoing nothing', async (t) => {
    const gateway = await startTestGateway(t, { probe: { entry: 'probe' } });
    const { url: agentUrl } = await listenAgent(t, createEchoAgent());
    const [registry] = await startRegistries(testScope(t), 'sqlite');
    const console = await startConsoleFor(testScope(t), (registry as { baseUrl: string }).baseUrl);
    const refusals: Array<[string, string, number]> = [
      ['a malformed percent-escape', 'GET /rpc/NHS%20943%20476%205919%zz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n', 400],
      ['a bad request line', 'GET /x NHS-943-476-5919\r\n\r\n', 400],
      ['headers over 16 KiB', `GET / HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${'a'.repeat(20_000)}\r\n\r\n`, 431],
    ];
    const servers: Array<[string, string, RegExp]> = [
      ['gateway', gateway.url, /^application\/json/],
      ['agent', agentUrl, /^application\/json/],
      ['console', console.url, /^text\/html/],
    ];
    for (const [server, base, contentType] of servers) {
      const port = Number(new URL(base).port);
      for (const [name, raw, status] of refusals) {
        const answer = await exchange(port, raw);
        const [head = '', body = ''] = answer.split('\r\n\r\n');
        assert.equal(Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), status, `${server}, ${name}`);
        assert.match(/\r\ncontent-type: ([^\r]+)/i.exec(head)?.[1] ?? '', contentType, `${server}, ${name}`);
        if (server !== 'console') assert.equal(JSON.parse(body).error.code, -32600, `${server}, ${name}`);
        assert.doesNotMatch(answer, /943|aaaaaaaa/, `${server}, ${name}: nothing of the request is echoed`);
        if (server === 'console') {
          // Issue 28, item 5: the earliest refusals carry what every console page carries.
          assert.match(head, /\r\ncontent-security-policy: default-src 'none';[^\r]*frame-ancestors 'none'/i, `${name}: CSP`);
          assert.match(head, /\r\nx-frame-options: DENY/i, `${name}: no framing`);
          assert.match(head, /\r\nx-content-type-options: nosniff/i, `${name}: no sniffing`);
          assert.match(head, /\r\ncache-control: no-store/i, `${name}: not cached`);
        }
      }
    }
  });

  // Issue 28, item 5: a caller that asked for JSON got the console's HTML page; and the gateway's 413
  // named Fastify's internal error code (FST_ERR_CTP_BODY_TOO_LARGE).
  test('the console answers JSON to a caller that prefers it; the gateway names no framework internals', async (t) => {
    const [registry] = await startRegistries(testScope(t), 'sqlite');
    const console = await startConsoleFor(testScope(t), (registry as { baseUrl: string }).baseUrl);
    const port = Number(new URL(console.url).port);
    for (const [accept, json] of [
      ['application/json', true],
      ['application/json, text/html;q=0.5', true],
      ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', false],
      ['text/html, application/json;q=0.1', false],
    ] as const) {
      const answer = await exchange(port, `GET /agents/NHS%20943%zz HTTP/1.1\r\nhost: x\r\naccept: ${accept}\r\nconnection: close\r\n\r\n`);
      const [head = '', body = ''] = answer.split('\r\n\r\n');
      assert.match(head, /^HTTP\/1\.1 400/, accept);
      assert.match(head, /\r\nx-content-type-options: nosniff/i, accept);
      assert.match(head, /\r\ncontent-security-policy: /i, accept);
      if (json) {
        assert.match(/\r\ncontent-type: ([^\r]+)/i.exec(head)?.[1] ?? '', /^application\/json/, accept);
        assert.equal(JSON.parse(body).error.code, 'BAD_REQUEST', accept);
      } else {
        assert.match(/\r\ncontent-type: ([^\r]+)/i.exec(head)?.[1] ?? '', /^text\/html/, accept);
      }
      assert.doesNotMatch(answer, /943/);
    }

    const gateway = await startTestGateway(t, { probe: { entry: 'probe' } });
    const big = await fetch(`${gateway.url}/rpc/probe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { pad: 'x'.repeat(2 * 1024 * 1024) } }) });
    assert.equal(big.status, 413);
    const text = await big.text();
    assert.doesNotMatch(text, /FST_|ERR_/, 'no framework code in the answer');
    assert.equal(JSON.parse(text).error.code, -32600);
    assert.match(JSON.parse(text).error.data.reason, /larger than this server accepts/);
  });
});
