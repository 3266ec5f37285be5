import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { connectStdio, envFor, mcpEnv, readResult, startMcpTestRegistry, uniqueName } from './helpers.ts';

describe('ward mcp over stdio, with the SDK client, against a real registry', () => {
  test('tools/list shows the three tools with the spec arguments, enums, defaults and bounds', async (t) => {
    const registry = await startMcpTestRegistry(t);
    const { client } = await connectStdio(t, envFor(registry));
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((tool) => tool.name),
      ['discover_agents', 'route', 'register'],
    );
    const [discover, route, register] = tools.map((tool) => tool.inputSchema as any);

    assert.deepEqual(discover.required, ['capability']);
    assert.deepEqual(Object.keys(discover.properties), [
      'capability',
      'jurisdiction',
      'protocol',
      'purpose_of_use',
      'limit',
    ]);
    assert.deepEqual(discover.properties.protocol.enum, ['mesh-a2a-jsonrpc', 'fhir-rest', 'hl7v2-mllp', 'a2a-jsonrpc']);
    assert.deepEqual(discover.properties.purpose_of_use.enum, [
      'treatment',
      'payment',
      'operations',
      'research',
    ]);
    assert.deepEqual(
      {
        type: discover.properties.limit.type,
        minimum: discover.properties.limit.minimum,
        maximum: discover.properties.limit.maximum,
        default: discover.properties.limit.default,
      },
      { type: 'integer', minimum: 1, maximum: 100, default: 20 },
    );

    assert.deepEqual(route.required, ['target_agent_id']);
    assert.deepEqual(Object.keys(route.properties), [
      'target_agent_id',
      'caller_jurisdiction',
      'purpose_of_use',
    ]);
    assert.deepEqual(route.properties.purpose_of_use.enum, [
      'treatment',
      'payment',
      'operations',
      'research',
    ]);

    assert.deepEqual(register.required, ['display_name', 'jurisdiction', 'endpoint_url', 'capabilities']);
    assert.deepEqual(Object.keys(register.properties), [
      'display_name',
      'jurisdiction',
      'endpoint_url',
      'capabilities',
      'protocol',
      'description',
    ]);
    assert.deepEqual(register.properties.capabilities, {
      ...register.properties.capabilities,
      type: 'array',
      items: { type: 'string' },
    });
    assert.equal(register.properties.protocol.default, 'mesh-a2a-jsonrpc');

    for (const schema of [discover, route, register]) assert.equal(schema.additionalProperties, false);
    assert.equal(tools[0]?.annotations?.readOnlyHint, true);
    assert.equal(tools[2]?.annotations?.readOnlyHint, false);
  });

  test('the three-step flow: discover_agents finds the agent, route advises on it, register adds a new one that discovery then finds', async (t) => {
    const registry = await startMcpTestRegistry(t);
    const { client } = await connectStdio(t, envFor(registry));

    const discovered = readResult(
      await client.callTool({
        name: 'discover_agents',
        arguments: {
          capability: 'triage.assess',
          jurisdiction: 'GB',
          protocol: 'mesh-a2a-jsonrpc',
          purpose_of_use: 'treatment',
          limit: 5,
        },
      }),
    );
    assert.equal(discovered.isError, false);
    assert.equal(discovered.json.result_count, 1);
    assert.equal(discovered.json.results[0].agent_id, registry.triageAgentId);
    assert.equal(discovered.json.query.limit, 5);
    assert.equal(
      typeof discovered.json.signed_response,
      'string',
      'the registry JSON arrives whole, signature included',
    );

    const advice = readResult(
      await client.callTool({
        name: 'route',
        arguments: {
          target_agent_id: registry.triageAgentId,
          caller_jurisdiction: 'GB',
          purpose_of_use: 'treatment',
        },
      }),
    );
    assert.equal(advice.isError, false);
    assert.equal(advice.json.resolved_target, registry.triageAgentId);
    assert.equal(advice.json.selected.url, 'https://agents.example.org/triage');
    assert.equal(typeof advice.json.trust_bundle, 'object');
    assert.equal(registry.requests.filter((r) => r === 'POST /v1/route').length, 1);

    const name = uniqueName('Consent verifier');
    const registered = readResult(
      await client.callTool({
        name: 'register',
        arguments: {
          display_name: name,
          jurisdiction: 'gb',
          endpoint_url: 'https://consent.example.org/a2a',
          capabilities: ['consent.verify'],
          description: 'Checks consent records.',
        },
      }),
    );
    assert.equal(registered.isError, false);
    assert.match(registered.json.agent_id, /^registry:\/\/gb\/agents\/[0-9A-Z]{26}$/);
    assert.deepEqual(
      registered.json.endpoints.map((e: any) => [e.url, e.protocol]),
      [['https://consent.example.org/a2a', 'mesh-a2a-jsonrpc']],
    );
    assert.deepEqual(registered.json.capabilities.skills, ['consent.verify']);
    assert.deepEqual(
      registered.json.capabilities.protocols,
      ['mesh-a2a-jsonrpc'],
      'protocol defaults to mesh-a2a-jsonrpc',
    );
    assert.equal(registered.json.owner.org_id, 'org-mcp', 'the agent belongs to the key’s organisation');
    assert.equal(registered.json.description, 'Checks consent records.');

    const found = readResult(
      await client.callTool({ name: 'discover_agents', arguments: { capability: 'consent.verify' } }),
    );
    assert.deepEqual(
      found.json.results.map((r: any) => r.agent_id),
      [registered.json.agent_id],
    );
    assert.equal(found.json.query.limit, 20, 'the default limit is sent');
  });

  test('register sends its own idempotency key and maps protocol to the endpoint and the capabilities', async (t) => {
    const registry = await startMcpTestRegistry(t);
    const agentIds: string[] = [];
    const { client } = await connectStdio(t, envFor(registry));
    const seeded = registry.idempotencyKeys.length;
    const arguments_ = {
      jurisdiction: 'GB',
      endpoint_url: 'https://fhir.example.org/r4',
      capabilities: ['records.search'],
      protocol: 'fhir-rest',
    };
    for (const name of [uniqueName('FHIR A'), uniqueName('FHIR B')]) {
      const result = readResult(
        await client.callTool({ name: 'register', arguments: { ...arguments_, display_name: name } }),
      );
      assert.equal(result.isError, false);
      assert.deepEqual(
        result.json.endpoints.map((e: any) => e.protocol),
        ['fhir-rest'],
      );
      assert.deepEqual(result.json.capabilities.protocols, ['fhir-rest']);
      agentIds.push(result.json.agent_id);
    }
    assert.notEqual(agentIds[0], agentIds[1], 'two calls are two registrations, not a replay');
    const sent = registry.idempotencyKeys.slice(seeded);
    assert.equal(sent.length, 2);
    for (const key of sent)
      assert.match(String(key), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.notEqual(sent[0], sent[1], 'a fresh key per call');
  });

  test('an unknown tool is a protocol error, not a tool result', async (t) => {
    const registry = await startMcpTestRegistry(t);
    const { client } = await connectStdio(t, envFor(registry));
    await assert.rejects(
      client.callTool({ name: 'delete_everything', arguments: {} }),
      /Unknown tool: delete_everything/,
    );
  });

  test('stdout carries nothing but MCP messages; the start-up line goes to stderr', async (t) => {
    const registry = await startMcpTestRegistry(t);
    const { client, stderr } = await connectStdio(t, envFor(registry));
    const errors: Error[] = [];
    client.onerror = (error) => errors.push(error);
    await client.listTools();
    await client.callTool({ name: 'discover_agents', arguments: { capability: 'triage.assess' } });
    await client.callTool({ name: 'discover_agents', arguments: { capability: 'triage.assess', limit: 0 } });
    assert.deepEqual(errors, [], 'every line on stdout parsed as a JSON-RPC message');
    assert.match(
      stderr(),
      /ward mcp: serving MCP on stdio for registry registry:\/\/gb\/registries\/local at http:\/\/127\.0\.0\.1:\d+/,
    );
    assert.doesNotMatch(stderr(), /rk_/, 'the API key is never logged');
  });
});

describe('ward mcp without an API key', () => {
  test('against a registry whose authentication is disabled (npm start), the tools work and stderr says why no key is needed', async (t) => {
    const registry = await startMcpTestRegistry(t);
    const { client, stderr } = await connectStdio(t, mcpEnv({ REGISTRY_URL: registry.baseUrl }));
    const registered = readResult(
      await client.callTool({
        name: 'register',
        arguments: { display_name: uniqueName('Keyless'), jurisdiction: 'GB', endpoint_url: 'https://keyless.example.org/a2a', capabilities: ['keyless.skill'] },
      }),
    );
    assert.equal(registered.isError, false, registered.text);
    const found = readResult(await client.callTool({ name: 'discover_agents', arguments: { capability: 'keyless.skill' } }));
    assert.equal(found.json.result_count, 1);
    assert.match(stderr(), /no API key: the registry's authentication is disabled, development only/);
  });
});
