import { resolve } from 'node:path';
import { Type, type Static } from 'typebox';
import { ConfigError, readEnvironment } from './env-schema.ts';
import { keySealerFromConfig } from './crypto/key-sealer.ts';
import { normaliseJurisdiction } from './jurisdictions.ts';
import { rememberSources, settingSources } from './settings-catalogue.ts';

/** The development mesh secret named by the contract (§10); production refuses it. */
export const DEFAULT_MESH_JWT_SECRET = 'mesh-dev-secret-change-me';

const Port = Type.Integer({ minimum: 0, maximum: 65535 });

/**
 * Every configuration variable, with its default. Read once from the environment, validated, frozen
 * and injected (docs/configuration.md lists them). A bad value stops start-up naming the variable.
 */
export const ConfigSchema = Type.Object({
  REGISTRY_ENV: Type.Union([Type.Literal('development'), Type.Literal('production'), Type.Literal('test')], {
    default: 'development',
  }),
  REGISTRY_HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  REGISTRY_PORT: Type.Integer({ ...Port, default: 8080 }),
  REGISTRY_PUBLIC_URL: Type.Optional(Type.String({ format: 'uri', pattern: '^https?://' })),
  REGISTRY_DATA_DIR: Type.String({ minLength: 1, default: './data' }),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  DATABASE_SCHEMA: Type.Optional(Type.String({ pattern: '^[a-z_][a-z0-9_]{0,62}$' })),
  DATABASE_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 200, default: 10 }),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  REGISTRY_AUTH_MODE: Type.Union(
    [Type.Literal('disabled'), Type.Literal('jwt'), Type.Literal('mtls'), Type.Literal('dpop')],
    { default: 'disabled' },
  ),
  REGISTRY_TIER: Type.Union([Type.Literal('root'), Type.Literal('sovereign'), Type.Literal('organisational')], {
    default: 'root',
  }),
  REGISTRY_JURISDICTION: Type.String({ default: 'GB' }),
  REGISTRY_NAME: Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,62}$', default: 'local' }),
  REGISTRY_PARENT_URL: Type.Optional(Type.String({ format: 'uri', pattern: '^https?://' })),
  /** Lifetime of the delegation statements this registry issues to its children (docs/federation.md). */
  REGISTRY_DELEGATION_TTL_SECONDS: Type.Integer({ minimum: 60, maximum: 86_400, default: 900 }),
  /** Deadline of federated discovery's fan-out, of fetching a child's keys, of each fetch from the parent. */
  REGISTRY_FEDERATION_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 60_000, default: 2000 }),
  REGISTRY_SIGNING_ALG: Type.Union([Type.Literal('ES256'), Type.Literal('EdDSA'), Type.Literal('RS256')], {
    default: 'ES256',
  }),
  REGISTRY_SIGN_RESPONSES: Type.Boolean({ default: true }),
  REGISTRY_LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
    { default: 'info' },
  ),
  /**
   * One line per answer (`all`), only answers of 400 and over (`errors`), or none; unset: `errors`,
   * or `all` when REGISTRY_ENV=production (requestLogMode in core/http/http-kit.ts).
   */
  REGISTRY_REQUEST_LOG: Type.Optional(Type.Union([Type.Literal('all'), Type.Literal('errors'), Type.Literal('none')])),
  REGISTRY_CORS_ORIGINS: Type.Optional(Type.String()),
  REGISTRY_JWT_JWKS_URI: Type.Optional(Type.String({ format: 'uri', pattern: '^https?://' })),
  REGISTRY_JWT_ISSUER: Type.Optional(Type.String({ minLength: 1 })),
  REGISTRY_JWT_AUDIENCE: Type.Optional(Type.String({ minLength: 1 })),
  REGISTRY_TLS_CERT_FILE: Type.Optional(Type.String({ minLength: 1 })),
  REGISTRY_TLS_KEY_FILE: Type.Optional(Type.String({ minLength: 1 })),
  REGISTRY_MTLS_CA_FILE: Type.Optional(Type.String({ minLength: 1 })),
  /** mtls mode: PEM CRL(s) of the client CA, re-read when the file changes; revoked client certificates fail the handshake. */
  REGISTRY_MTLS_CRL_FILE: Type.Optional(Type.String({ minLength: 1 })),
  REGISTRY_ALLOW_PRIVATE_ENDPOINTS: Type.Boolean({ default: false }),
  /** Agent card signatures at `POST /v1/agents/from-card`; unset: `required` in production, `if-present` otherwise. */
  REGISTRY_CARD_SIGNATURES: Type.Optional(Type.Union([Type.Literal('off'), Type.Literal('if-present'), Type.Literal('required')])),
  /** Deadline of one card read (the card and the JWKS its signature names, each). */
  REGISTRY_CARD_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 60_000, default: 5000 }),
  /** Largest card (and JWKS) the registry reads. */
  REGISTRY_CARD_MAX_BYTES: Type.Integer({ minimum: 1024, maximum: 1_048_576, default: 65_536 }),
  /** Time between re-reads of the cards agents were registered from; 0 turns re-reading off on this instance. */
  REGISTRY_CARD_REREAD_INTERVAL_MS: Type.Integer({ minimum: 0, maximum: 7 * 86_400_000, default: 3_600_000 }),
  /** Key-encryption key for the signing keys at rest: 32 bytes, base64 or hex (docs/security.md). */
  REGISTRY_KEY_ENCRYPTION_KEY: Type.Optional(Type.String({ minLength: 1 })),
  /** The same, read from a file (a mounted secret). */
  REGISTRY_KEY_ENCRYPTION_KEY_FILE: Type.Optional(Type.String({ minLength: 1 })),
  /** Earlier key-encryption keys, comma-separated, while rotating: keys sealed under them are sealed again. */
  REGISTRY_KEY_ENCRYPTION_KEY_PREVIOUS: Type.Optional(Type.String({ minLength: 1 })),
  /** dpop mode: require server-issued DPoP nonces (RFC 9449 §8) in every proof. */
  REGISTRY_DPOP_NONCES: Type.Boolean({ default: false }),
  /** Requests a minute each client address may make to the public federation routes; 0 turns the limit off. */
  REGISTRY_FEDERATION_RATE_PER_MINUTE: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 120 }),
  /** Fetches of other entities a minute the OIDF resolve endpoint may make for one client address, across its requests. */
  /** Text (string values and member names) a request body may hold for the PHI guard to read; more is 413. */
  REGISTRY_PHI_MAX_TEXT_CHARS: Type.Integer({ minimum: 16_384, maximum: 1_048_576, default: 262_144 }),
  REGISTRY_OIDF_RESOLVE_FETCHES_PER_MINUTE: Type.Integer({ minimum: 12, maximum: 1_000_000, default: 60 }),
  /** How long a new signing key is valid (its trust anchor's `not_after`). */
  REGISTRY_KEY_LIFETIME_DAYS: Type.Integer({ minimum: 2, maximum: 3650, default: 365 }),
  /** Renew (rotate) the signing key this many days before its `not_after`; 0 only warns. */
  REGISTRY_KEY_RENEW_DAYS: Type.Integer({ minimum: 0, maximum: 365, default: 30 }),
  REGISTRY_HEALTH_INTERVAL_MS: Type.Integer({ minimum: 1000, maximum: 86_400_000, default: 30_000 }),
  REGISTRY_HEALTH_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 60_000, default: 2000 }),
  REGISTRY_HEALTH_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 256, default: 16 }),
  /** Off turns the background prober off on this instance (readings stay as they are). */
  REGISTRY_HEALTH_PROBES: Type.Boolean({ default: true }),
  /** Signed discovery answers kept per instance; 0 turns the cache off. */
  REGISTRY_DISCOVERY_CACHE_ENTRIES: Type.Integer({ minimum: 0, maximum: 100_000, default: 1000 }),
  /** Agent rows discovery keeps between answers, reused while their version is current; 0 keeps none. */
  REGISTRY_DISCOVERY_KEPT_ROWS: Type.Integer({ minimum: 0, maximum: 100_000, default: 10_000 }),
  REGISTRY_ATTESTATION_ISSUERS_FILE: Type.Optional(Type.String({ minLength: 1 })),
  /** How long events stay in the stream (resumable by cursor); the transparency ledger keeps everything. */
  REGISTRY_EVENT_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 36_500, default: 30 }),
  /** How long SIGTERM/SIGINT may take to finish in-flight requests before the process exits anyway. */
  REGISTRY_SHUTDOWN_GRACE_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 15_000 }),
  /**
   * On SIGTERM/SIGINT, how long `ward registry` keeps serving with /readyz at 503 before it closes, so
   * a balancer takes it out of rotation first (a rolling restart with no failed request).
   */
  REGISTRY_SHUTDOWN_DRAIN_MS: Type.Integer({ minimum: 0, maximum: 600_000, default: 0 }),
  /** HMAC secret for stored API-key hashes; shared by every instance. Unset: one is made and kept in storage. */
  REGISTRY_API_KEY_SECRET: Type.Optional(Type.String({ minLength: 32 })),
  MESH_JWT_SECRET: Type.String({ minLength: 1, default: DEFAULT_MESH_JWT_SECRET }),
  CONSOLE_PORT: Type.Integer({ ...Port, default: 3000 }),
  /** The console's public origin (computer use drives it there); default http://127.0.0.1:$CONSOLE_PORT. */
  CONSOLE_URL: Type.Optional(Type.String({ format: 'uri', pattern: '^https?://' })),
  GATEWAY_PORT: Type.Integer({ ...Port, default: 8100 }),
  /** Debian's Chromium, driven by playwright-core for computer use (docs/computer-use.md); never a downloaded browser. */
  CHROMIUM_PATH: Type.String({ minLength: 1, default: '/usr/bin/chromium' }),
  /** Comma list of origins computer use may open (default: the console's own). */
  COMPUTER_USE_ALLOWED_ORIGINS: Type.Optional(Type.String({ minLength: 1 })),
  /** Base URL of the Messages API (default: the vendor's). */
  COMPUTER_USE_MODEL_URL: Type.Optional(Type.String({ format: 'uri', pattern: '^https?://' })),
  COMPUTER_USE_API_KEY: Type.Optional(Type.String({ minLength: 1 })),
  COMPUTER_USE_MODEL: Type.String({ minLength: 1, default: 'claude-sonnet-4-6' }),
  COMPUTER_USE_MAX_RUNS: Type.Integer({ minimum: 1, maximum: 16, default: 2 }),
  /** How long one model call may take before the run fails with the reason. */
  COMPUTER_USE_MODEL_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, maximum: 600, default: 120 }),
  /** Port of `ward computer-use demo-model`, the scripted demonstration model on loopback (0: any free port). */
  COMPUTER_USE_DEMO_MODEL_PORT: Type.Integer({ ...Port, default: 8190 }),
});

export type Config = Readonly<Static<typeof ConfigSchema>>;

export { ConfigError };

/**
 * Loads the configuration from an environment map (default `process.env`). Unknown variables are
 * ignored; empty strings count as unset. Throws `ConfigError` naming the first bad variable.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const config = readEnvironment(ConfigSchema, env) as Static<typeof ConfigSchema>;
  const jurisdiction = normaliseJurisdiction(config.REGISTRY_JURISDICTION);
  if (!jurisdiction) {
    throw new ConfigError('REGISTRY_JURISDICTION', 'must be an ISO 3166-1 alpha-2 country code');
  }
  config.REGISTRY_JURISDICTION = jurisdiction;
  config.REGISTRY_DATA_DIR = resolve(config.REGISTRY_DATA_DIR);
  checkSupported(config);
  if (config.REGISTRY_ENV === 'production') checkProductionGuards(config);
  return rememberSources(Object.freeze(config), settingSources(Object.keys(ConfigSchema.properties), env));
}

/** Each authentication mode needs its settings; a mode without them must not start (and run open). */
function checkSupported(config: Static<typeof ConfigSchema>): void {
  const mode = config.REGISTRY_AUTH_MODE;
  if (mode !== 'disabled') {
    for (const variable of ['REGISTRY_JWT_JWKS_URI', 'REGISTRY_JWT_ISSUER', 'REGISTRY_JWT_AUDIENCE'] as const) {
      if (!config[variable]) throw new ConfigError(variable, `is required when REGISTRY_AUTH_MODE=${mode}`);
    }
  }
  if (mode === 'mtls') {
    for (const variable of ['REGISTRY_TLS_CERT_FILE', 'REGISTRY_TLS_KEY_FILE', 'REGISTRY_MTLS_CA_FILE'] as const) {
      if (!config[variable]) throw new ConfigError(variable, 'is required when REGISTRY_AUTH_MODE=mtls');
    }
  }
  if (config.REGISTRY_KEY_RENEW_DAYS >= config.REGISTRY_KEY_LIFETIME_DAYS) {
    throw new ConfigError('REGISTRY_KEY_RENEW_DAYS', `must be less than REGISTRY_KEY_LIFETIME_DAYS (${config.REGISTRY_KEY_LIFETIME_DAYS})`);
  }
  if (config.REGISTRY_CARD_REREAD_INTERVAL_MS > 0 && config.REGISTRY_CARD_REREAD_INTERVAL_MS < 1000) {
    throw new ConfigError('REGISTRY_CARD_REREAD_INTERVAL_MS', 'must be 0 (off) or at least 1000');
  }
  keySealerFromConfig(config); // a bad key-encryption key stops start-up here, naming its variable
  if (Boolean(config.REGISTRY_TLS_CERT_FILE) !== Boolean(config.REGISTRY_TLS_KEY_FILE)) {
    throw new ConfigError(config.REGISTRY_TLS_CERT_FILE ? 'REGISTRY_TLS_KEY_FILE' : 'REGISTRY_TLS_CERT_FILE', 'TLS needs both a certificate and a key');
  }
}

function isLoopbackUrl(url: string): boolean {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Contract §9: production refuses insecure settings at start. */
function checkProductionGuards(config: Static<typeof ConfigSchema>): void {
  if (config.REGISTRY_AUTH_MODE === 'disabled') {
    throw new ConfigError('REGISTRY_AUTH_MODE', 'must not be "disabled" when REGISTRY_ENV=production');
  }
  if (config.MESH_JWT_SECRET === DEFAULT_MESH_JWT_SECRET) {
    throw new ConfigError('MESH_JWT_SECRET', 'the default development secret is refused in production');
  }
  if (Buffer.byteLength(config.MESH_JWT_SECRET) < 32) {
    throw new ConfigError('MESH_JWT_SECRET', 'must be at least 32 bytes in production');
  }
  // The keys that decide who is authenticated must not be replaceable on the network path.
  const jwks = config.REGISTRY_JWT_JWKS_URI;
  if (jwks && jwks.startsWith('http://') && !isLoopbackUrl(jwks)) {
    throw new ConfigError('REGISTRY_JWT_JWKS_URI', 'must be an https:// URL in production (http:// only to a loopback key server on this host)');
  }
  // The parent's answers decide this registry's chain and which federation tokens it accepts.
  if (config.REGISTRY_PARENT_URL && !config.REGISTRY_PARENT_URL.startsWith('https://')) {
    throw new ConfigError('REGISTRY_PARENT_URL', 'must be an https:// URL in production');
  }
}

/** How card signatures are checked: the setting, else `required` in production and `if-present` elsewhere. */
export function cardSignaturePolicy(config: Pick<Config, 'REGISTRY_CARD_SIGNATURES' | 'REGISTRY_ENV'>): 'off' | 'if-present' | 'required' {
  return config.REGISTRY_CARD_SIGNATURES ?? (config.REGISTRY_ENV === 'production' ? 'required' : 'if-present');
}

/** The URL clients use to reach this registry; defaults to the listen address. */
export function publicBaseUrl(config: Config, listenPort?: number): string {
  if (config.REGISTRY_PUBLIC_URL) return config.REGISTRY_PUBLIC_URL.replace(/\/+$/, '');
  const host = config.REGISTRY_HOST === '0.0.0.0' ? '127.0.0.1' : config.REGISTRY_HOST;
  const scheme = config.REGISTRY_TLS_CERT_FILE ? 'https' : 'http';
  return `${scheme}://${host}:${listenPort ?? config.REGISTRY_PORT}`;
}
