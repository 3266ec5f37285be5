import { createInterface } from 'node:readline';

/** JSON-RPC "internal error": the server exists but cannot serve (MCP has no code of its own for it). */
export const CONFIGURATION_ERROR_CODE = -32603;

/**
 * What `ward mcp` on stdio does when its configuration cannot work: instead of exiting before the
 * client's `initialize` (which MCP clients report only as "Connection closed"), it answers every
 * request on stdin with a JSON-RPC error carrying the one-line reason, so the client shows
 * `MCP error -32603: ward mcp: configuration error: REGISTRY_API_KEY: …`, and ends when the client
 * hangs up. Notifications get no answer. Resolves once stdin has ended.
 */
export function refuseOnStdio(
  reason: string,
  details: Record<string, unknown>,
  io: { stdin?: NodeJS.ReadableStream; stdout?: NodeJS.WritableStream } = {},
): Promise<void> {
  const stdin = io.stdin ?? process.stdin;
  const stdout = io.stdout ?? process.stdout;
  const lines = createInterface({ input: stdin, crlfDelay: Infinity });
  lines.on('line', (line) => {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      return;
    }
    const request = message as { id?: unknown; method?: unknown } | null;
    if (typeof request?.method !== 'string' || (typeof request.id !== 'string' && typeof request.id !== 'number')) return;
    stdout.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: request.id, error: { code: CONFIGURATION_ERROR_CODE, message: reason, data: details } })}\n`,
    );
  });
  return new Promise((resolve) => lines.once('close', resolve));
}
