import { Type, type Static } from 'typebox';
import { ConfigSchema } from '../core/config.ts';
import { ConfigError, readEnvironment } from '../core/env-schema.ts';
import { isLoopback } from '../core/http/loopback.ts';
import { rememberSources, settingSources } from '../core/settings-catalogue.ts';

const shared = ConfigSchema.properties;

/**
 * The admin console's configuration (contract §1, §12; docs/console.md lists every variable): read
 * once, validated, frozen. Its own schema, because the console is a client of a registry that may run
 * elsewhere; the variables it shares with the registry are the registry's own definitions.
 */
export const ConsoleConfigSchema = Type.Object({
  REGISTRY_ENV: shared.REGISTRY_ENV,
  REGISTRY_AUTH_MODE: shared.REGISTRY_AUTH_MODE,
  REGISTRY_PORT: shared.REGISTRY_PORT,
  GATEWAY_PORT: shared.GATEWAY_PORT,
  CONSOLE_PORT: shared.CONSOLE_PORT,
  CONSOLE_URL: shared.CONSOLE_URL,
  CONSOLE_HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  /** Default `http://127.0.0.1:$REGISTRY_PORT`. */
  REGISTRY_URL: Type.Optional(Type.String({ format: 'uri', pattern: '^https?://' })),
  /** Default `http://127.0.0.1:$GATEWAY_PORT`. */
  GATEWAY_URL: Type.Optional(Type.String({ format: 'uri', pattern: '^https?://' })),
  /** The MCP server's streamable HTTP endpoint the try page calls tools through (`ward mcp --transport sse`). */
  CONSOLE_MCP_URL: Type.String({ format: 'uri', pattern: '^https?://', default: 'http://127.0.0.1:8090/mcp' }),
  CONSOLE_TLS_CERT_FILE: Type.Optional(Type.String({ minLength: 1 })),
  CONSOLE_TLS_KEY_FILE: Type.Optional(Type.String({ minLength: 1 })),
  /** Comma list of the https origins a TLS-terminating proxy serves the console at (production without TLS here). */
  CONSOLE_ALLOWED_ORIGINS: Type.Optional(Type.String({ minLength: 1 })),
  /** Comma list of the addresses (or CIDR ranges) of that proxy: only its X-Forwarded-Proto/-For are believed. */
  CONSOLE_TRUST_PROXY: Type.Optional(Type.String({ minLength: 1 })),
  CONSOLE_SESSION_IDLE_MINUTES: Type.Integer({ minimum: 1, maximum: 24 * 60, default: 30 }),
  CONSOLE_SESSION_MAX_HOURS: Type.Integer({ minimum: 1, maximum: 7 * 24, default: 12 }),
  CONSOLE_REGISTRY_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 120_000, default: 10_000 }),
  CONSOLE_LOG_LEVEL: shared.REGISTRY_LOG_LEVEL,
  /** As REGISTRY_REQUEST_LOG, for the console's requests. */
  CONSOLE_REQUEST_LOG: shared.REGISTRY_REQUEST_LOG,
});

type Shape = Static<typeof ConsoleConfigSchema>;

/** The validated console configuration, with the derived addresses filled in. */
export type ConsoleConfig = Readonly<
  Shape & {
    REGISTRY_URL: string;
    GATEWAY_URL: string;
    /** Origins (scheme://host:port) requests may come from; the first is the console's own. */
    allowedOrigins: readonly string[];
    /** Development without authentication on loopback: pages open without sign-in, under a banner. */
    openAccess: boolean;
    /** Cookies and HSTS need TLS somewhere in front of the browser: here or at the proxy. */
    secureCookies: boolean;
    /** The proxies whose forwarded headers count (Fastify `trustProxy`); none when empty. */
    trustedProxies: readonly string[];
  }
>;

/**
 * Loads and checks the console configuration. Production refuses to start unless the console serves
 * TLS itself (CONSOLE_TLS_CERT_FILE/KEY_FILE) or is told the https origins of the proxy in front of it
 * (CONSOLE_ALLOWED_ORIGINS): a console of a health registry is never served in clear by accident.
 */
export function loadConsoleConfig(env: Record<string, string | undefined> = process.env): ConsoleConfig {
  const config = readEnvironment(ConsoleConfigSchema, env) as Shape;
  const production = config.REGISTRY_ENV === 'production';
  if (Boolean(config.CONSOLE_TLS_CERT_FILE) !== Boolean(config.CONSOLE_TLS_KEY_FILE)) {
    throw new ConfigError(config.CONSOLE_TLS_CERT_FILE ? 'CONSOLE_TLS_KEY_FILE' : 'CONSOLE_TLS_CERT_FILE', 'TLS needs both a certificate and a key');
  }
  const tls = Boolean(config.CONSOLE_TLS_CERT_FILE);
  const listed = (config.CONSOLE_ALLOWED_ORIGINS ?? '')
    .split(',')
    .map((origin) => origin.trim())
    .filter(Boolean)
    .map((origin) => originOf(origin, 'CONSOLE_ALLOWED_ORIGINS'));
  if (production && !tls && listed.length === 0) {
    throw new ConfigError('CONSOLE_TLS_CERT_FILE', 'production needs TLS: set CONSOLE_TLS_CERT_FILE and CONSOLE_TLS_KEY_FILE, or CONSOLE_ALLOWED_ORIGINS with the https origins of the proxy in front');
  }
  if (production && listed.some((origin) => !origin.startsWith('https://'))) {
    throw new ConfigError('CONSOLE_ALLOWED_ORIGINS', 'must list https:// origins only when REGISTRY_ENV=production');
  }
  const trustedProxies = (config.CONSOLE_TRUST_PROXY ?? '').split(',').map((entry) => entry.trim()).filter(Boolean);
  // Behind a TLS-terminating proxy the console sees plain HTTP; only the proxy's X-Forwarded-Proto says
  // the browser used HTTPS, and without believing it no Secure session cookie would ever be set.
  if (production && !tls && trustedProxies.length === 0) {
    throw new ConfigError('CONSOLE_TRUST_PROXY', 'production behind a proxy needs the proxy\'s address here, so its X-Forwarded-Proto: https is believed');
  }
  const own = config.CONSOLE_URL ? originOf(config.CONSOLE_URL, 'CONSOLE_URL') : `${tls ? 'https' : 'http'}://${displayHost(config.CONSOLE_HOST)}:${config.CONSOLE_PORT}`;
  const openAccess = config.REGISTRY_AUTH_MODE === 'disabled' && !production && isLoopback(config.CONSOLE_HOST);
  const frozen = Object.freeze({
    ...config,
    REGISTRY_URL: (config.REGISTRY_URL ?? `http://127.0.0.1:${config.REGISTRY_PORT}`).replace(/\/+$/, ''),
    GATEWAY_URL: (config.GATEWAY_URL ?? `http://127.0.0.1:${config.GATEWAY_PORT}`).replace(/\/+$/, ''),
    // With port 0 the own origin is known only once listening; requests are checked against their Host then.
    allowedOrigins: [...new Set([...(config.CONSOLE_URL || config.CONSOLE_PORT !== 0 ? [own] : []), ...listed])],
    openAccess,
    secureCookies: tls || production,
    trustedProxies,
  });
  return rememberSources(frozen, settingSources(Object.keys(ConsoleConfigSchema.properties), env));
}

function originOf(value: string, variable: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(variable, `"${value}" is not a URL; expected http(s)://host[:port]`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(variable, 'must be http(s) origins');
  return url.origin;
}

function displayHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}
