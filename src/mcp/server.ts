import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import packageJson from '../../package.json' with { type: 'json' };
import type { RegistryClient } from '../client/registry-client.ts';
import { toolResult } from './tool-result.ts';
import { discoverAgentsTool } from './tools/discover-agents.ts';
import { registerTool } from './tools/register.ts';
import { routeTool } from './tools/route.ts';
import type { WardTool } from './tools/ward-tool.ts';

/** The tools of the spec's Tool interface, in the order of the standard flow. */
export const WARD_TOOLS: readonly WardTool[] = [discoverAgentsTool, routeTool, registerTool];

const INSTRUCTIONS =
  'Ward is a trust registry for health-care AI agents. Standard flow: discover_agents by capability, then route ' +
  'with the agent_id of a result to get signed routing advice, then contact the selected endpoint yourself. ' +
  'register adds an agent. Results are the registry JSON; errors carry the registry error envelope ' +
  '{"error":{"code","message","details","retryable","retry_after_ms"}}. The registry refuses patient data.';

/**
 * Builds an MCP server with the three tools over one registry client (spec: Tool interface;
 * contract §11). One server serves one connection, so HTTP transports build one per session.
 * - `tools/list` shows each tool's JSON Schema: enums, defaults and bounds as the spec gives them.
 * - A result is one text item holding the registry's JSON as the registry sent it.
 * - A registry error is `isError: true` with the error envelope as the text ({@link toolResult}, the
 *   one mapping of error codes to MCP); so is an argument the schema refuses (`VALIDATION_ERROR`,
 *   nothing sent) and a registry that cannot be reached (`SERVICE_UNAVAILABLE`, retryable).
 * - An unknown tool name is a protocol error (-32602), as the MCP specification asks.
 */
export function createMcpServer(registry: RegistryClient, tools: readonly WardTool[] = WARD_TOOLS): Server {
  const server = new Server(
    { name: 'ward', title: 'Ward trust registry', version: packageJson.version },
    { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS },
  );
  const byName = new Map(tools.map((tool) => [tool.name, tool]));

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.map(listing) }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const tool = byName.get(request.params.name);
    if (!tool)
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown tool: ${request.params.name}. Tools: ${[...byName.keys()].join(', ')}`,
      );
    return toolResult(await tool.invoke(request.params.arguments ?? {}, registry, extra.signal));
  });

  return server;
}

function listing(tool: WardTool): Tool {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: tool.inputSchema as unknown as Tool['inputSchema'],
    annotations: { title: tool.title, ...tool.annotations },
  };
}
