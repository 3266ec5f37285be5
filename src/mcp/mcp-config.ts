import { Type, type Static } from 'typebox';
import { ConfigSchema } from '../core/config.ts';
import { ConfigError, readEnvironment } from '../core/env-schema.ts';
import { isLoopback } from '../core/http/loopback.ts';
import { RAW_KEY_PATTERN } from '../contract/api-key-format.ts';

/** Port of the HTTP transports (SSE and streamable HTTP) unless `--port` or `MCP_PORT` says otherwise (contract §1). */
export const DEFAULT_MCP_PORT = 8090;

/**
 * The MCP server's configuration (spec: Tool interface; contract §1, §11): one schema with defaults,
 * read once from the environment, validated and frozen. Apart from the registry's configuration
 * because the MCP server is only a client of a registry, possibly a remote one. docs/mcp.md lists
 * every variable.
 */
export const McpConfigSchema = Type.Object({
  // Defined once, with the registry's (src/core/config.ts).
  REGISTRY_ENV: ConfigSchema.properties.REGISTRY_ENV,
  REGISTRY_URL: Type.String({ minLength: 1 }),
  /** Optional: without it the server runs only against a registry whose authentication is disabled (development). */
  REGISTRY_API_KEY: Type.Optional(Type.String({ minLength: 1 })),
  MCP_HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  MCP_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: DEFAULT_MCP_PORT }),
  MCP_REGISTRY_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 300_000, default: 10_000 }),
});

export type McpConfig = Readonly<Static<typeof McpConfigSchema>>;

const HINTS: Record<string, string> = {
  REGISTRY_URL: "is required: the registry's base URL, e.g. http://127.0.0.1:8080",
};

/** How to get a key, for the message when a registry needs one and none is set. */
export const API_KEY_HINT = 'create one with `npx ward keys create --org <org> --scopes registry:read,registry:write`';

/**
 * Loads the configuration from an environment map (default `process.env`). Empty strings count as
 * unset. `REGISTRY_API_KEY` may be unset: the start-up probe then checks that the registry asks for
 * no authentication (a development registry, as `npm start` runs it) and stops with a message if it does. Throws `ConfigError` naming the first unusable variable, and never repeats the API key.
 * `REGISTRY_URL` must be an http(s) URL without credentials, query or fragment; with
 * `REGISTRY_ENV=production` it must be https unless it is a loopback address, since the API key
 * travels in every request.
 */
export function loadMcpConfig(env: Record<string, string | undefined> = process.env): McpConfig {
  const trimmed = Object.fromEntries(Object.entries(env).map(([key, value]) => [key, value?.trim()]));
  if (!trimmed.REGISTRY_URL) throw new ConfigError('REGISTRY_URL', HINTS.REGISTRY_URL ?? 'is required');
  if (!trimmed.REGISTRY_API_KEY) delete trimmed.REGISTRY_API_KEY;
  const config = readEnvironment(McpConfigSchema, trimmed) as Static<typeof McpConfigSchema>;
  config.REGISTRY_URL = checkRegistryUrl(config.REGISTRY_URL, config.REGISTRY_ENV === 'production');
  if (config.REGISTRY_API_KEY !== undefined && !RAW_KEY_PATTERN.test(config.REGISTRY_API_KEY)) {
    throw new ConfigError(
      'REGISTRY_API_KEY',
      'is not a registry API key: expected rk_ followed by 32 to 128 letters and digits',
    );
  }
  return Object.freeze(config);
}

/** The URL without a trailing slash, or a `ConfigError` saying what is wrong with it. */
function checkRegistryUrl(raw: string, production: boolean): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('REGISTRY_URL', 'is not a URL; expected http(s)://host[:port]');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError('REGISTRY_URL', `must be an http:// or https:// URL, not ${url.protocol}`);
  }
  if (url.username || url.password)
    throw new ConfigError('REGISTRY_URL', 'must not carry credentials; use REGISTRY_API_KEY');
  if (url.search || url.hash)
    throw new ConfigError('REGISTRY_URL', 'must be a base URL, without query or fragment');
  if (production && url.protocol === 'http:' && !isLoopback(url.hostname)) {
    throw new ConfigError(
      'REGISTRY_URL',
      'must be https:// when REGISTRY_ENV=production (the API key travels in every request)',
    );
  }
  return url.href.replace(/\/+$/, '');
}

