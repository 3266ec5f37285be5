import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { describe, test, type TestContext } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  countRequests,
  envFor,
  readResult,
  startHttpMcp,
  startMcpTestRegistry,
  type McpTestRegistry,
} from './helpers.ts';

async function connect(t: TestContext, transport: Transport): Promise<Client> {
  const client = new Client({ name: 'ward-test', version: '1.0.0' });
  t.after(() => client.close());
  await client.connect(transport);
  return client;
}

/** Every tool, an argument refused without an HTTP call, and a registry error, over one client. */
async function exerciseTools(client: Client, registry: McpTestRegistry): Promise<void> {
  const { tools } = await client.listTools();
  assert.deepEqual(
    tools.map((tool) => tool.name),
    ['discover_agents', 'route', 'register'],
  );
  assert.equal((tools[0]?.inputSchema as any).properties.limit.maximum, 100);

  const discovered = readResult(
    await client.callTool({ name: 'discover_agents', arguments: { capability: 'triage.assess' } }),
  );
  assert.equal(discovered.isError, false);
  assert.equal(discovered.json.results[0].agent_id, registry.triageAgentId);

  const advice = readResult(
    await client.callTool({ name: 'route', arguments: { target_agent_id: registry.triageAgentId } }),
  );
  assert.equal(advice.json.resolved_target, registry.triageAgentId);

  const name = `HTTP agent ${randomBytes(3).toString('hex')}`;
  const registered = readResult(
    await client.callTool({
      name: 'register',
      arguments: {
        display_name: name,
        jurisdiction: 'GB',
        endpoint_url: 'https://h.example/a2a',
        capabilities: ['consent.verify'],
      },
    }),
  );
  assert.equal(registered.isError, false);
  assert.equal(registered.json.display_name, name);

  const before = countRequests(registry, 'GET /v1/discover');
  const refused = readResult(
    await client.callTool({
      name: 'discover_agents',
      arguments: { capability: 'triage.assess', limit: 101 },
    }),
  );
  assert.equal(refused.isError, true);
  assert.equal(refused.json.error.code, 'VALIDATION_ERROR');
  assert.equal(countRequests(registry, 'GET /v1/discover'), before);

  const phi = readResult(
    await client.callTool({
      name: 'register',
      arguments: {
        display_name: 'x',
        jurisdiction: 'GB',
        endpoint_url: 'https://h.example/a2a',
        capabilities: ['x.y'],
        description: 'NHS number 943 476 5919',
      },
    }),
  );
  assert.equal(phi.isError, true);
  assert.equal(phi.json.error.code, 'PHI_DETECTED');
}

/** A raw HTTP request, so the Host header can be set to anything. */
function rawRequest(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method: 'GET', headers }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

describe('ward mcp over HTTP (--transport sse: streamable HTTP and SSE on one port), against a real registry', () => {
  test('streamable HTTP at /mcp and SSE at /sse serve the tools, side by side, on the port chosen for --port 0', async (t) => {
    const registry = await startMcpTestRegistry(t);
    const mcp = await startHttpMcp(t, envFor(registry));
    assert.match(mcp.baseUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.notEqual(mcp.baseUrl, 'http://127.0.0.1:0');
    const streamable = await connect(t, new StreamableHTTPClientTransport(new URL(`${mcp.baseUrl}/mcp`)));
    const sse = await connect(t, new SSEClientTransport(new URL(`${mcp.baseUrl}/sse`)));
    await exerciseTools(streamable, registry);
    await exerciseTools(sse, registry);
    assert.equal(mcp.stdout(), '', 'logs go to stderr in HTTP mode too');
  });

  test('a revoked key: both transports answer isError with the registry’s 401 envelope', async (t) => {
    const registry = await startMcpTestRegistry(t);
    const mcp = await startHttpMcp(t, envFor(registry));
    await registry.revokeKey(registry.keyId);
    for (const transport of [
      new StreamableHTTPClientTransport(new URL(`${mcp.baseUrl}/mcp`)),
      new SSEClientTransport(new URL(`${mcp.baseUrl}/sse`)),
    ]) {
      const client = await connect(t, transport);
      const result = readResult(
        await client.callTool({ name: 'discover_agents', arguments: { capability: 'triage.assess' } }),
      );
      assert.equal(result.isError, true);
      assert.equal(result.json.error.code, 'UNAUTHORIZED');
    }
  });

  test('a request naming another host is refused (DNS rebinding); GET /mcp is 405; unknown paths say where MCP is', async (t) => {
    const registry = await startMcpTestRegistry(t);
    const mcp = await startHttpMcp(t, envFor(registry));
    const port = new URL(mcp.baseUrl).port;
    for (const path of ['/mcp', '/sse']) {
      const refused = await rawRequest(`${mcp.baseUrl}${path}`, { host: `attacker.example:${port}` });
      assert.equal(refused.status, 403, path);
    }
    const get = await rawRequest(`${mcp.baseUrl}/mcp`, {
      host: `localhost:${port}`,
      accept: 'text/event-stream',
    });
    assert.equal(get.status, 405, 'stateless streamable HTTP offers no GET stream');
    const local = await rawRequest(`${mcp.baseUrl}/nowhere`, { host: `localhost:${port}` });
    assert.equal(local.status, 404);
    assert.match(local.body, /\/mcp \(streamable HTTP\) and \/sse \(SSE\)/);
  });

  test('SIGTERM stops the server cleanly', async (t) => {
    const registry = await startMcpTestRegistry(t);
    const mcp = await startHttpMcp(t, envFor(registry));
    const sse = await connect(t, new SSEClientTransport(new URL(`${mcp.baseUrl}/sse`)));
    await sse.listTools();
    const exited = new Promise<number | null>((resolve) => mcp.child.once('exit', (code) => resolve(code)));
    mcp.child.kill('SIGTERM');
    assert.equal(await exited, 0);
  });
});
