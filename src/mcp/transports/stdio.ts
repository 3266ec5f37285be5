import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** A running stdio MCP server. */
export type StdioService = {
  /** Resolves once the session is over: the client hung up and every request it sent was answered. */
  readonly closed: Promise<void>;
  close(): Promise<void>;
};

type Id = string | number;
const requestId = (message: JSONRPCMessage): Id | undefined =>
  'method' in message && 'id' in message ? message.id : undefined;
const responseId = (message: JSONRPCMessage): Id | undefined =>
  !('method' in message) && 'id' in message ? message.id : undefined;

/**
 * Serves one MCP client on this process's stdin and stdout (newline-delimited JSON-RPC). Stdout then
 * belongs to the protocol: anything else written there corrupts the stream, so callers log to stderr.
 * The client ending stdin ends the session (MCP clients close stdin first and only signal a server
 * that lingers), but requests already read are answered first, so `printf … | ward mcp` works too.
 */
export async function serveStdio(
  server: Server,
  io: { stdin?: NodeJS.ReadableStream; stdout?: NodeJS.WritableStream } = {},
): Promise<StdioService> {
  const stdin = (io.stdin ?? process.stdin) as NodeJS.ReadStream;
  const transport = new StdioServerTransport(stdin, (io.stdout ?? process.stdout) as NodeJS.WriteStream);
  let resolveClosed = () => {};
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  let closing: Promise<void> | undefined;
  const close = () => (closing ??= server.close().finally(resolveClosed));

  const pending = new Set<Id>();
  let hungUp = false;
  const closeWhenIdle = () => {
    if (hungUp && pending.size === 0) void close();
  };
  await server.connect(transport);
  // Wrapped after connect, which installs the server's own handlers.
  const receive = transport.onmessage;
  transport.onmessage = (message: JSONRPCMessage) => {
    const id = requestId(message);
    if (id !== undefined) pending.add(id);
    receive?.(message);
  };
  const send = transport.send.bind(transport);
  transport.send = async (message: JSONRPCMessage) => {
    await send(message);
    const id = responseId(message);
    if (id !== undefined && pending.delete(id)) closeWhenIdle();
  };
  const hangUp = () => {
    hungUp = true;
    closeWhenIdle();
  };
  stdin.once('end', hangUp);
  stdin.once('close', hangUp);
  return { closed, close };
}
