import type { AddressInfo } from 'node:net';
import { isLoopback } from '../../core/http/loopback.ts';
import { buildMcpHttp, type McpHttpOptions } from './http-app.ts';

export { MCP_PATHS } from './http-app.ts';

export type HttpService = {
  /** `http://<host>:<port>`, the port as bound (so `0` shows the one chosen). */
  readonly url: string;
  /** Open SSE sessions (streamable HTTP keeps none). */
  readonly sseSessions: () => number;
  close(): Promise<void>;
};

export type HttpServiceOptions = McpHttpOptions & { port: number };

/**
 * Serves MCP over HTTP on one port (contract §1, §11): the transports of ./http-app.ts, listening on
 * `host:port`. Off loopback it warns: the transports have no authentication of their own.
 */
export async function startHttpService(options: HttpServiceOptions): Promise<HttpService> {
  const app = await buildMcpHttp(options);
  await app.listen({ host: options.host, port: options.port });
  const { port } = app.server.address() as AddressInfo;
  const hostInUrl = options.host.includes(':') ? `[${options.host}]` : options.host;
  if (!isLoopback(options.host)) {
    options.log(
      `ward mcp: warning: listening on ${options.host}, not loopback; the HTTP transports have no authentication of their own and act with REGISTRY_API_KEY`,
    );
  }
  return {
    url: `http://${hostInUrl}:${port}`,
    sseSessions: () => app.mcpSseSessions.size,
    close: () => app.close(),
  };
}
