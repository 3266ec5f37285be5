import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { alteringProxy } from '../helpers/altering-proxy.ts';
import {
  connectStdio,
  countRequests,
  envFor,
  mcpEnv,
  readResult,
  startMcpTestRegistry,
  uniqueName,
} from './helpers.ts';

describe('ward mcp over stdio: refused arguments and registry errors, against a real registry', () => {
  test('limit 0 and 101 are refused before any HTTP call; 1 and 100 pass', async (t) => {
    const registry = await startMcpTestRegistry(t);
    const { client } = await connectStdio(t, envFor(registry));
    const before = countRequests(registry, 'GET /v1/discover');
    for (const limit of [0, 101, 2.5, '20']) {
      const result = readResult(
        await client.callTool({ name: 'discover_agents', arguments: { capability: 'triage.assess', limit } }),
      );
      assert.equal(result.isError, true, `limit ${limit}`);
      assert.equal(result.json.error.code, 'VALIDATION_ERROR');
      assert.equal(result.json.error.details.errors[0].pointer, '/limit');
    }
    assert.equal(
      countRequests(registry, 'GET /v1/discover'),
      before,
      'the registry saw no discovery request',
    );
    for (const limit of [1, 100]) {
      const result = readResult(
        await client.callTool({ name: 'discover_agents', arguments: { capability: 'triage.assess', limit } }),
      );
      assert.equal(result.isError, false, `limit ${limit}`);
    }
    assert.equal(countRequests(registry, 'GET /v1/discover'), before + 2);
  });

  test('every other bad argument is refused before any HTTP call, naming the argument', async (t) => {
    const registry = await startMcpTestRegistry(t);
    const { client } = await connectStdio(t, envFor(registry));
    const register = {
      display_name: 'x',
      jurisdiction: 'GB',
      endpoint_url: 'https://a.example/a2a',
      capabilities: ['consent.verify'],
    };
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['discover_agents', {}, '/capability'],
      ['discover_agents', { capability: 'triage.assess', protocol: 'smtp' }, '/protocol'],
      ['discover_agents', { capability: 'triage.assess', purpose_of_use: 'marketing' }, '/purpose_of_use'],
      ['discover_agents', { capability: 'triage.assess', require_features: 'x' }, '/require_features'],
      ['route', {}, '/target_agent_id'],
      ['route', { target_agent_id: 'https://not-a-registry-uri' }, '/target_agent_id'],
      ['route', { target_agent_id: registry.triageAgentId, purpose_of_use: 'marketing' }, '/purpose_of_use'],
      ['register', { ...register, display_name: undefined }, '/display_name'],
      ['register', { ...register, capabilities: 'consent.verify' }, '/capabilities'],
      ['register', { ...register, endpoint_url: 'not a url' }, '/endpoint_url'],
      ['register', { ...register, protocol: 'smtp' }, '/protocol'],
    ];
    const before = registry.requests.length;
    for (const [name, args, pointer] of cases) {
      const result = readResult(await client.callTool({ name, arguments: JSON.parse(JSON.stringify(args)) }));
      assert.equal(result.isError, true, `${name} ${pointer}`);
      assert.equal(result.json.error.code, 'VALIDATION_ERROR', `${name} ${pointer}`);
      assert.deepEqual(
        result.json.error.details.errors.map((e: any) => e.pointer),
        [pointer],
        `${name} ${JSON.stringify(args)}`,
      );
    }
    assert.equal(registry.requests.length, before, 'the registry saw no request at all');
  });

  test('registry errors come back as isError with the registry envelope: 422 validation, 422 PHI_DETECTED, 404', async (t) => {
    const registry = await startMcpTestRegistry(t);
    const { client } = await connectStdio(t, envFor(registry));
    const invalid = readResult(
      await client.callTool({
        name: 'discover_agents',
        arguments: { capability: 'triage.assess', jurisdiction: 'ZZ' },
      }),
    );
    assert.equal(invalid.isError, true);
    assert.equal(invalid.json.error.code, 'VALIDATION_ERROR');
    assert.deepEqual(Object.keys(invalid.json.error).sort(), [
      'code',
      'details',
      'message',
      'retry_after_ms',
      'retryable',
    ]);
    assert.equal(
      countRequests(registry, 'GET /v1/discover'),
      1,
      'this one the registry refused, not the tool',
    );

    const phi = readResult(
      await client.callTool({
        name: 'register',
        arguments: {
          display_name: uniqueName('Leaky'),
          jurisdiction: 'GB',
          endpoint_url: 'https://a.example/a2a',
          capabilities: ['consent.verify'],
          description: 'Patient NHS number 943 476 5919',
        },
      }),
    );
    assert.equal(phi.isError, true);
    assert.equal(phi.json.error.code, 'PHI_DETECTED');
    assert.deepEqual(
      phi.json.error.details.findings.map((f: any) => f.pointer),
      ['/description'],
    );
    assert.doesNotMatch(phi.text, /943 476 5919/, 'the blocked value is not echoed');

    const unknown = readResult(
      await client.callTool({
        name: 'route',
        arguments: { target_agent_id: 'registry://gb/agents/01JAAAAAAAAAAAAAAAAAAAAAAA' },
      }),
    );
    assert.equal(unknown.isError, true);
    assert.equal(unknown.json.error.code, 'AGENT_NOT_FOUND');
  });

  test('a key revoked while the server runs: every tool answers isError with the registry’s 401 UNAUTHORIZED envelope', async (t) => {
    const registry = await startMcpTestRegistry(t);
    const { client } = await connectStdio(t, envFor(registry));
    await registry.revokeKey(registry.keyId);
    const calls = [
      { name: 'discover_agents', arguments: { capability: 'triage.assess' } },
      { name: 'route', arguments: { target_agent_id: registry.triageAgentId } },
      {
        name: 'register',
        arguments: {
          display_name: 'x',
          jurisdiction: 'GB',
          endpoint_url: 'https://a.example/a2a',
          capabilities: ['consent.verify'],
        },
      },
    ];
    for (const call of calls) {
      const result = readResult(await client.callTool(call));
      assert.equal(result.isError, true, call.name);
      assert.equal(result.json.error.code, 'UNAUTHORIZED', call.name);
      assert.equal(result.json.error.retryable, false);
    }
  });

  test('a read-only key may discover and route; register comes back with the registry’s 403', async (t) => {
    const registry = await startMcpTestRegistry(t);
    const reader = await registry.createKey({ scopes: ['registry:read'] });
    const { client } = await connectStdio(t, envFor(registry, reader.raw_key));
    assert.equal(
      readResult(
        await client.callTool({ name: 'discover_agents', arguments: { capability: 'triage.assess' } }),
      ).isError,
      false,
    );
    assert.equal(
      readResult(
        await client.callTool({ name: 'route', arguments: { target_agent_id: registry.triageAgentId } }),
      ).isError,
      false,
    );
    const refused = readResult(
      await client.callTool({
        name: 'register',
        arguments: {
          display_name: 'x',
          jurisdiction: 'GB',
          endpoint_url: 'https://a.example/a2a',
          capabilities: ['consent.verify'],
        },
      }),
    );
    assert.equal(refused.isError, true);
    assert.equal(refused.json.error.code, 'INSUFFICIENT_SCOPE');
    assert.equal(refused.json.error.details.required_scope, 'registry:write');
  });

  test('an answer altered between the registry and ward mcp is isError SIGNATURE_INVALID, and the altered answer goes no further', async (t) => {
    const registry = await startMcpTestRegistry(t);
    // Another agent id in place of the real one: a caller would be sent elsewhere.
    const elsewhere = `${registry.triageAgentId.slice(0, -1)}${registry.triageAgentId.endsWith('Z') ? 'Y' : 'Z'}`;
    const tampering = await alteringProxy(t, registry.baseUrl, {
      response: (path, text) => (path.startsWith('/v1/discover') || path.startsWith('/v1/route') ? text.replaceAll(registry.triageAgentId, elsewhere) : text),
    });
    const { client } = await connectStdio(t, mcpEnv({ REGISTRY_URL: tampering.url, REGISTRY_API_KEY: registry.key }));
    for (const [name, args] of [
      ['discover_agents', { capability: 'triage.assess' }],
      ['route', { target_agent_id: registry.triageAgentId }],
    ] as const) {
      const result = readResult(await client.callTool({ name, arguments: args }));
      assert.equal(result.isError, true, name);
      assert.equal(result.json.error.code, 'SIGNATURE_INVALID', name);
      assert.equal(result.json.error.details.problem, 'altered', name);
      assert.equal(result.text.includes(elsewhere), false, name);
    }
  });
});
