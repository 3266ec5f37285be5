import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createRegistryClient } from '../../src/client/registry-client.ts';
import { createMcpServer } from '../../src/mcp/server.ts';
import { registrationBody } from '../../src/mcp/tools/register.ts';
import { PROTOCOLS, PURPOSES_OF_USE } from '../../src/contract/mcp-vocabulary.ts';
import { PURPOSES_OF_USE as REGISTRY_PURPOSES } from '../../src/contract/agent-record.ts';
import { readResult } from './helpers.ts';

type Sent = { method: string; url: string; headers: Record<string, string>; body: unknown };
const KEY = `rk_${'x'.repeat(40)}`;

/**
 * The MCP server in-process over the SDK's in-memory transport, its registry client on a fetch that
 * records each request and answers `{"ok":true}`: what reaches "the registry" is exactly `sent`.
 */
async function connectInMemory(t: TestContext): Promise<{ client: Client; sent: Sent[] }> {
  const sent: Sent[] = [];
  const fakeFetch = (async (url: string, init: RequestInit) => {
    sent.push({
      method: String(init.method),
      url,
      headers: init.headers as Record<string, string>,
      body: init.body ? JSON.parse(String(init.body)) : undefined,
    });
    return new Response('{"ok":true}', { status: 200, headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
  const registry = createRegistryClient({
    baseUrl: 'http://registry.test/',
    credential: KEY,
    timeoutMs: 5000,
    fetch: fakeFetch,
    // The stand-in registry signs nothing; verification is tested against a real one (test/client).
    verifySignatures: false,
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = createMcpServer(registry);
  const client = new Client({ name: 'ward-test', version: '1.0.0' });
  await server.connect(serverSide);
  await client.connect(clientSide);
  t.after(async () => {
    await client.close();
    await server.close();
  });
  return { client, sent };
}

const REGISTER = {
  display_name: 'Consent verifier',
  jurisdiction: 'GB',
  endpoint_url: 'https://consent.example.org/a2a',
  capabilities: ['consent.verify'],
};
const ROUTE = { target_agent_id: 'registry://gb/agents/01JAAAAAAAAAAAAAAAAAAAAAAA' };

describe('MCP tools: arguments, bounds and the registry calls they make', () => {
  test('every argument bound: values inside pass and reach the registry, values outside are refused with nothing sent', async (t) => {
    const { client, sent } = await connectInMemory(t);
    const accepted: Array<[string, Record<string, unknown>]> = [
      ['discover_agents', { capability: 'consent.verify' }],
      ['discover_agents', { capability: 'consent.verify', limit: 1 }],
      ['discover_agents', { capability: 'consent.verify', limit: 100 }],
      ...PROTOCOLS.map((protocol): [string, Record<string, unknown>] => [
        'discover_agents',
        { capability: 'consent.verify', protocol },
      ]),
      ...PURPOSES_OF_USE.map((purpose_of_use): [string, Record<string, unknown>] => [
        'discover_agents',
        { capability: 'consent.verify', purpose_of_use },
      ]),
      ['route', ROUTE],
      ...PURPOSES_OF_USE.map((purpose_of_use): [string, Record<string, unknown>] => [
        'route',
        { ...ROUTE, purpose_of_use, caller_jurisdiction: 'FR' },
      ]),
      ['register', REGISTER],
      ['register', { ...REGISTER, capabilities: [] }],
      ...PROTOCOLS.map((protocol): [string, Record<string, unknown>] => [
        'register',
        { ...REGISTER, protocol, description: 'Checks consent.' },
      ]),
    ];
    for (const [name, args] of accepted) {
      const result = readResult(await client.callTool({ name, arguments: args }));
      assert.equal(result.isError, false, `${name} ${JSON.stringify(args)}`);
    }
    assert.equal(sent.length, accepted.length, 'one registry request per accepted call');

    const refused: Array<[string, Record<string, unknown>, string]> = [
      ['discover_agents', { capability: 'consent.verify', limit: 0 }, '/limit'],
      ['discover_agents', { capability: 'consent.verify', limit: 101 }, '/limit'],
      ['discover_agents', { capability: 'consent.verify', limit: -1 }, '/limit'],
      ['discover_agents', { capability: 'consent.verify', limit: 10.5 }, '/limit'],
      ['discover_agents', { capability: 'consent.verify', limit: '10' }, '/limit'],
      ['discover_agents', { capability: 42 }, '/capability'],
      ['discover_agents', { capability: 'consent.verify', jurisdiction: 44 }, '/jurisdiction'],
      ['discover_agents', { capability: 'consent.verify', protocol: 'MESH-A2A-JSONRPC' }, '/protocol'],
      ['discover_agents', { capability: 'consent.verify', purpose_of_use: 'Treatment' }, '/purpose_of_use'],
      ['discover_agents', { capability: 'consent.verify', token_binding: 'dpop' }, '/token_binding'],
      ['route', { target_agent_id: 'agents/01J' }, '/target_agent_id'],
      ['route', { ...ROUTE, caller_jurisdiction: ['GB'] }, '/caller_jurisdiction'],
      ['route', { ...ROUTE, purpose: { purpose_of_use: 'treatment' } }, '/purpose'],
      ['register', { ...REGISTER, jurisdiction: undefined }, '/jurisdiction'],
      ['register', { ...REGISTER, endpoint_url: undefined }, '/endpoint_url'],
      ['register', { ...REGISTER, capabilities: undefined }, '/capabilities'],
      ['register', { ...REGISTER, capabilities: ['consent.verify', 7] }, '/capabilities/1'],
      ['register', { ...REGISTER, endpoint_url: 'consent.example.org' }, '/endpoint_url'],
      ['register', { ...REGISTER, description: 12 }, '/description'],
      ['register', { ...REGISTER, trust: {} }, '/trust'],
    ];
    for (const [name, args, pointer] of refused) {
      const result = readResult(await client.callTool({ name, arguments: JSON.parse(JSON.stringify(args)) }));
      assert.equal(result.isError, true, `${name} ${JSON.stringify(args)}`);
      assert.deepEqual(result.json, {
        error: {
          code: 'VALIDATION_ERROR',
          message: `Invalid arguments for ${name}; nothing was sent to the registry.`,
          details: {
            tool: name,
            errors: [{ in: 'arguments', pointer, reason: result.json.error.details.errors[0].reason }],
          },
          retryable: false,
          retry_after_ms: null,
        },
      });
    }
    assert.equal(sent.length, accepted.length, 'no request for any refused call');
  });

  test('a refusal names every problem and the allowed values, and never echoes a value', async (t) => {
    const { client } = await connectInMemory(t);
    const result = readResult(
      await client.callTool({
        name: 'discover_agents',
        arguments: { purpose_of_use: 'NHS 943 476 5919', limit: 0 },
      }),
    );
    assert.deepEqual(result.json.error.details.errors, [
      { in: 'arguments', pointer: '/capability', reason: 'is required' },
      {
        in: 'arguments',
        pointer: '/purpose_of_use',
        reason: 'must be one of treatment, payment, operations, research',
      },
      { in: 'arguments', pointer: '/limit', reason: 'must be >= 1' },
    ]);
    assert.doesNotMatch(result.text, /943/);
    const oddName = readResult(
      await client.callTool({
        name: 'discover_agents',
        arguments: { capability: 'a.b', '943 476 5919': true },
      }),
    );
    assert.deepEqual(oddName.json.error.details.errors, [
      { in: 'arguments', pointer: '', reason: 'is not an argument of this tool' },
    ]);
  });

  test('discover_agents sends GET /v1/discover with the filters and the default limit, and the API key', async (t) => {
    const { client, sent } = await connectInMemory(t);
    await client.callTool({
      name: 'discover_agents',
      arguments: {
        capability: 'consent.verify',
        jurisdiction: 'gb',
        protocol: 'fhir-rest',
        purpose_of_use: 'research',
      },
    });
    await client.callTool({ name: 'discover_agents', arguments: { capability: 'triage.assess', limit: 7 } });
    assert.deepEqual(
      sent.map((s) => [s.method, s.url]),
      [
        [
          'GET',
          'http://registry.test/v1/discover?capability=consent.verify&jurisdiction=gb&protocol=fhir-rest&purpose_of_use=research&limit=20',
        ],
        ['GET', 'http://registry.test/v1/discover?capability=triage.assess&limit=7'],
      ],
    );
    assert.equal(sent[0]?.headers.authorization, `Bearer ${KEY}`);
  });

  test('route sends POST /v1/route with target, caller_jurisdiction and purpose.purpose_of_use', async (t) => {
    const { client, sent } = await connectInMemory(t);
    await client.callTool({
      name: 'route',
      arguments: { ...ROUTE, caller_jurisdiction: 'FR', purpose_of_use: 'treatment' },
    });
    await client.callTool({ name: 'route', arguments: ROUTE });
    assert.deepEqual(
      sent.map((s) => [s.method, s.url, s.body]),
      [
        [
          'POST',
          'http://registry.test/v1/route',
          {
            target: ROUTE.target_agent_id,
            caller_jurisdiction: 'FR',
            purpose: { purpose_of_use: 'treatment' },
          },
        ],
        ['POST', 'http://registry.test/v1/route', { target: ROUTE.target_agent_id }],
      ],
    );
    assert.equal(
      sent[0]?.headers['x-idempotency-key'],
      undefined,
      'routing changes nothing and needs no key',
    );
  });

  test('register sends a full registration body built from the flat arguments, with a fresh idempotency key', async (t) => {
    const { client, sent } = await connectInMemory(t);
    await client.callTool({
      name: 'register',
      arguments: { ...REGISTER, protocol: 'hl7v2-mllp', description: 'ADT feed' },
    });
    await client.callTool({ name: 'register', arguments: REGISTER });
    assert.deepEqual(
      sent.map((s) => [s.method, s.url]),
      [
        ['POST', 'http://registry.test/v1/agents'],
        ['POST', 'http://registry.test/v1/agents'],
      ],
    );
    assert.deepEqual(sent[0]?.body, {
      display_name: 'Consent verifier',
      jurisdiction: 'GB',
      endpoints: [{ url: 'https://consent.example.org/a2a', protocol: 'hl7v2-mllp' }],
      capabilities: { skills: ['consent.verify'], protocols: ['hl7v2-mllp'] },
      trust: { certificates: [], signatures: [], attestations: [] },
      description: 'ADT feed',
    });
    assert.deepEqual(sent[1]?.body, registrationBody({ ...REGISTER, protocol: 'mesh-a2a-jsonrpc' }));
    assert.equal((sent[1]?.body as any).description, undefined);
    const keys = sent.map((s) => s.headers['x-idempotency-key']);
    assert.match(String(keys[0]), /^[0-9a-f-]{36}$/);
    assert.notEqual(keys[0], keys[1]);
    assert.equal(sent[0]?.headers['content-type'], 'application/json');
  });

  test('the purposes of use are the registry’s own list', () => {
    assert.deepEqual([...PURPOSES_OF_USE], [...REGISTRY_PURPOSES]);
  });
});
