import { parseArgs } from 'node:util';
import packageJson from '../../../package.json' with { type: 'json' };
import { ConfigError } from '../../core/env-schema.ts';
import { API_KEY_HINT, loadMcpConfig } from '../../mcp/mcp-config.ts';
import { probeRegistry } from '../../mcp/probe-registry.ts';
import { createRegistryClient } from '../../client/registry-client.ts';
import { createMcpServer } from '../../mcp/server.ts';
import { MCP_PATHS, startHttpService } from '../../mcp/transports/http.ts';
import { serveStdio } from '../../mcp/transports/stdio.ts';
import { refuseOnStdio } from '../../mcp/transports/stdio-refusal.ts';
import type { WardCommand } from '../command.ts';

const USAGE = `Usage: ward mcp [--transport stdio|sse] [--port <port, default MCP_PORT or 8090>]

Serves the MCP tools discover_agents, route and register over stdio, or over HTTP (streamable HTTP
at /mcp and SSE at /sse on one port). stdio is the default. Needs REGISTRY_URL, and REGISTRY_API_KEY unless the registry's authentication
is disabled (the development registry of \`npm start\`); see docs/mcp.md.

Example:
  REGISTRY_URL=http://127.0.0.1:8080 npx ward mcp --transport stdio`;

// Every line goes to stderr: on stdio, stdout carries nothing but MCP messages.
const log = (line: string) => console.error(line);

/** `ward mcp`: the tool interface of the spec (contract §1, §11). */
export const mcpCommand: WardCommand = {
  name: 'mcp',
  usage: USAGE,
  async run(args) {
    let values: { transport?: string | undefined; port?: string | undefined };
    try {
      ({ values } = parseArgs({
        args,
        options: { transport: { type: 'string' }, port: { type: 'string' } },
      }));
    } catch (error) {
      log(`ward mcp: ${(error as Error).message}\n\n${USAGE}`);
      return 2;
    }
    // stdio by default: MCP client configurations stay short, and the Inspector's CLI, which takes
    // `--transport` as its own option, can launch `ward mcp` without it.
    const transport = values.transport ?? 'stdio';
    const port = values.port === undefined ? undefined : Number(values.port);
    if (transport !== 'stdio' && transport !== 'sse') {
      log(`ward mcp: --transport takes stdio or sse, not "${transport}"\n\n${USAGE}`);
      return 2;
    }
    if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port <= 65535)) {
      log(`ward mcp: --port takes a port number (0 to 65535), not "${values.port}"\n\n${USAGE}`);
      return 2;
    }
    if (transport === 'stdio' && port !== undefined)
      log('ward mcp: --port is ignored with --transport stdio');

    let setup: Awaited<ReturnType<typeof configure>>;
    try {
      setup = await configure();
    } catch (error) {
      // On stdio, an MCP client would see only "Connection closed" if we exited now: say it on
      // stderr, then answer the client's requests with the reason until it hangs up (stdio-refusal.ts).
      if (!(error instanceof ConfigError) || transport !== 'stdio' || process.stdin.isTTY) throw error;
      const reason = `ward mcp: configuration error: ${error.message}`;
      log(`ward: configuration error: ${error.message}`);
      await refuseOnStdio(reason, { variable: error.variable, docs: 'docs/mcp.md#configuration' });
      return 1;
    }
    const { config, registry, identity } = setup;
    const about =
      config.REGISTRY_API_KEY === undefined
        ? `registry ${identity.registry_id} at ${registry.baseUrl} (no API key: the registry's authentication is disabled, development only)`
        : `registry ${identity.registry_id} at ${registry.baseUrl}`;

    if (transport === 'stdio') {
      const service = await serveStdio(createMcpServer(registry));
      log(`ward mcp: serving MCP on stdio for ${about}`);
      onStop(() => service.close());
      void service.closed.then(() => process.exit(0));
      return 'running';
    }

    const service = await startHttpService({
      host: config.MCP_HOST,
      port: port ?? config.MCP_PORT,
      createServer: () => createMcpServer(registry),
      log,
    });
    log(
      `ward mcp: listening on ${service.url}${MCP_PATHS.streamableHttp} (streamable HTTP) and ${service.url}${MCP_PATHS.sse} (SSE) for ${about}`,
    );
    onStop(() => service.close().then(() => process.exit(0)));
    return 'running';
  },
};

/** Reads the configuration and probes the registry; a `ConfigError` names what cannot work. */
async function configure() {
  const config = loadMcpConfig();
  const registry = createRegistryClient({
    baseUrl: config.REGISTRY_URL,
    credential: config.REGISTRY_API_KEY,
    timeoutMs: config.MCP_REGISTRY_TIMEOUT_MS,
    userAgent: `ward-mcp/${packageJson.version}`,
  });
  const identity = await probeRegistry(registry);
  if (config.REGISTRY_API_KEY === undefined && identity.authentication_required) {
    throw new ConfigError('REGISTRY_API_KEY', `is required: the registry at ${registry.baseUrl} authenticates its callers; ${API_KEY_HINT}`);
  }
  return { config, registry, identity };
}

function onStop(stop: () => Promise<unknown>): void {
  let stopping = false;
  const handler = () => {
    if (stopping) return;
    stopping = true;
    void stop();
  };
  process.once('SIGINT', handler);
  process.once('SIGTERM', handler);
}
