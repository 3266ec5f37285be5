import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import { createMcpServer } from '../../src/mcp/server.ts';
import { buildMcpHttp, MCP_PATHS } from '../../src/mcp/transports/http-app.ts';
import type { RegistryClient } from '../../src/client/registry-client.ts';

/** Built without listening, on an address that is not loopback (so no Host check: inject has no socket port). */
async function build(t: TestContext) {
  const app = await buildMcpHttp({ host: '0.0.0.0', createServer: () => createMcpServer({} as RegistryClient), log: () => undefined });
  t.after(() => app.close());
  return app;
}

describe('the MCP HTTP transports as a Fastify plugin (buildMcpHttp, no listening)', () => {
  test('streamable HTTP takes POST only; a HEAD does not open an SSE session; unknown paths say where MCP is', async (t) => {
    const app = await build(t);
    for (const method of ['GET', 'DELETE', 'HEAD'] as const) {
      const answer = await app.inject({ method, url: MCP_PATHS.streamableHttp });
      assert.equal(answer.statusCode, 405, method);
      assert.equal(answer.headers.allow, 'POST');
    }
    const head = await app.inject({ method: 'HEAD', url: MCP_PATHS.sse });
    assert.equal(head.statusCode, 404);
    assert.equal(app.mcpSseSessions.size, 0);
    const nowhere = await app.inject({ method: 'GET', url: '/nowhere' });
    assert.equal(nowhere.statusCode, 404);
    assert.match(nowhere.body, /MCP is at \/mcp \(streamable HTTP\) and \/sse \(SSE\)/);
    const noSession = await app.inject({ method: 'POST', url: `${MCP_PATHS.sseMessages}?sessionId=none`, payload: {} });
    assert.equal(noSession.statusCode, 404);
    assert.equal(noSession.body, 'No such SSE session');
  });

  test('the SDK transport reads the body itself: malformed JSON is its JSON-RPC parse error, not a Fastify 400', async (t) => {
    const app = await build(t);
    const answer = await app.inject({
      method: 'POST',
      url: MCP_PATHS.streamableHttp,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      payload: '{bad',
    });
    assert.equal(answer.statusCode, 400);
    assert.equal(answer.json().error.code, -32700);
  });
});
