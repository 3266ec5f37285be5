import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { RegistryAnswer } from '../client/registry-client.ts';

/**
 * A tool's answer as an MCP tool result, and the MCP mapping of Ward's error tables (docs/errors.md,
 * "In MCP tool results"). A success is one text item, the registry's JSON as it was sent. A failure,
 * whatever its code (the registry's, core/errors.ts, or the client's, client/client-errors.ts), is a
 * tool execution error: `isError: true` with one text item holding the envelope, never a JSON-RPC
 * error, so the model reads `code` and `retryable` and can correct its call (MCP specification,
 * Tools, "Error handling"). The registry's own envelope is passed on as it was received.
 */
export function toolResult(answer: RegistryAnswer): CallToolResult {
  const content: CallToolResult['content'] = [{ type: 'text', text: answer.text }];
  return answer.ok ? { content } : { content, isError: true };
}
