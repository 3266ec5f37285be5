import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import {
  envFor,
  mcpEnv,
  runToEnd,
  startHttpMcp,
  startMcpTestRegistry,
  WARD_CLI,
  type McpTestRegistry,
} from './helpers.ts';

// The `mcp-inspector` binary of the official @modelcontextprotocol/inspector package (a devDependency).
const require = createRequire(import.meta.url);
const INSPECTOR = join(
  dirname(require.resolve('@modelcontextprotocol/inspector/package.json')),
  'cli',
  'build',
  'cli.js',
);

/**
 * `mcp-inspector --cli -e REGISTRY_URL=… -e REGISTRY_API_KEY=… <node> src/cli/ward.ts mcp <inspector options>`,
 * the command the README shows. `ward mcp` is launched without `--transport`: stdio is its default,
 * and the Inspector would take a `--transport` flag for itself. CLI mode opens no browser and
 * downloads nothing; its output is the JSON of the MCP result.
 */
async function inspect(t: TestContext, registry: McpTestRegistry, options: string[]): Promise<any> {
  const args = [
    INSPECTOR,
    '--cli',
    '-e',
    `REGISTRY_URL=${registry.baseUrl}`,
    '-e',
    `REGISTRY_API_KEY=${registry.key}`,
    process.execPath,
    WARD_CLI,
    'mcp',
    ...options,
  ];
  const result = await runToEnd(t, process.execPath, args, mcpEnv({}));
  assert.equal(result.code, 0, `inspector failed: ${result.stderr}`);
  return JSON.parse(result.stdout);
}

const textOf = (result: any) => {
  assert.equal(result.content.length, 1);
  return JSON.parse(result.content[0].text);
};

describe('the official MCP Inspector, in CLI mode, against ward mcp on stdio and a real registry', () => {
  test('--method tools/list lists the three tools with their schemas', async (t) => {
    const registry = await startMcpTestRegistry(t);
    const listed = await inspect(t, registry, ['--method', 'tools/list']);
    assert.deepEqual(
      listed.tools.map((tool: any) => tool.name),
      ['discover_agents', 'route', 'register'],
    );
    assert.equal(listed.tools[0].inputSchema.properties.limit.default, 20);
  });

  test('--method tools/call runs discover_agents, route and register (arguments typed from the schemas)', async (t) => {
    const registry = await startMcpTestRegistry(t);
    const discovered = await inspect(t, registry, [
      '--method',
      'tools/call',
      '--tool-name',
      'discover_agents',
      '--tool-arg',
      'capability=triage.assess',
      'limit=5',
    ]);
    assert.equal(discovered.isError, undefined);
    assert.equal(textOf(discovered).results[0].agent_id, registry.triageAgentId);
    assert.equal(textOf(discovered).query.limit, 5);

    const advice = await inspect(t, registry, [
      '--method',
      'tools/call',
      '--tool-name',
      'route',
      '--tool-arg',
      `target_agent_id=${registry.triageAgentId}`,
      'purpose_of_use=treatment',
    ]);
    assert.equal(textOf(advice).resolved_target, registry.triageAgentId);

    const registered = await inspect(t, registry, [
      '--method',
      'tools/call',
      '--tool-name',
      'register',
      '--tool-arg',
      'display_name=Inspector agent',
      'jurisdiction=GB',
      'endpoint_url=https://inspector.example.org/a2a',
      'capabilities=["consent.verify"]',
    ]);
    assert.deepEqual(textOf(registered).capabilities.skills, ['consent.verify']);
  });

  test('a refused argument comes back to the Inspector as an isError result', async (t) => {
    const registry = await startMcpTestRegistry(t);
    const refused = await inspect(t, registry, [
      '--method',
      'tools/call',
      '--tool-name',
      'discover_agents',
      '--tool-arg',
      'capability=triage.assess',
      'limit=0',
    ]);
    assert.equal(refused.isError, true);
    assert.equal(textOf(refused).error.code, 'VALIDATION_ERROR');
  });

  test('the Inspector also reaches ward mcp over streamable HTTP and SSE', async (t) => {
    const registry = await startMcpTestRegistry(t);
    const mcp = await startHttpMcp(t, envFor(registry));
    for (const [url, transport] of [
      [`${mcp.baseUrl}/mcp`, 'http'],
      [`${mcp.baseUrl}/sse`, 'sse'],
    ] as const) {
      const args = [
        INSPECTOR,
        '--cli',
        url,
        '--transport',
        transport,
        '--method',
        'tools/call',
        '--tool-name',
        'discover_agents',
        '--tool-arg',
        'capability=triage.assess',
      ];
      const result = await runToEnd(t, process.execPath, args, mcpEnv({}));
      assert.equal(result.code, 0, `${transport}: ${result.stderr}`);
      assert.equal(textOf(JSON.parse(result.stdout)).result_count, 1, transport);
    }
  });
});
