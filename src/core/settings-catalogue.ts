/**
 * Every setting Ward's registry and console read, with its group, its meaning and its default as an
 * operator reads them: the one source of the console's settings page and of docs/configuration.md
 * (a test keeps the tables there word for word in step with this one, and checks that every variable
 * of the registry's and the console's schemas is here). Meanings and defaults are written in the
 * docs' own form: `code` between backticks, nothing else.
 */

/** The groups, in the order the settings page and the docs show them. */
export const SETTING_GROUPS = [
  ['registry', 'Registry'],
  ['auth', 'Authentication and keys'],
  ['limits', 'Limits'],
  ['federation', 'Federation'],
  ['mesh', 'Mesh'],
  ['console', 'Console'],
  ['computer-use', 'Computer use'],
] as const;

export type SettingGroup = (typeof SETTING_GROUPS)[number][0];

export type Setting = {
  name: string;
  group: SettingGroup;
  /** The default, in words (`unset`, or the value between backticks). */
  default: string;
  meaning: string;
  /** Its value is never shown: a secret, or a URL that may carry a password. */
  secret?: true;
  /** Whose value the console shows: the registry's (from its diagnostics) or the console's own. */
  readBy?: 'console';
};

/**
 * Where a setting's value came from: the environment, a file another variable names (the
 * key-encryption key from `REGISTRY_KEY_ENCRYPTION_KEY_FILE`), or the default.
 */
export type SettingSource = 'environment' | 'file' | 'default';

/** Variables whose value is read from the file another variable names. */
const READ_FROM_FILE: Readonly<Record<string, string>> = { REGISTRY_KEY_ENCRYPTION_KEY: 'REGISTRY_KEY_ENCRYPTION_KEY_FILE' };

export const SETTINGS: readonly Setting[] = [
  { name: 'REGISTRY_ENV', group: 'registry', default: '`development`', meaning: '`development`, `test` or `production`. `production` turns on every production guard (configuration.md, "Production guards").' },
  { name: 'REGISTRY_HOST', group: 'registry', default: '`127.0.0.1`', meaning: 'Address the registry binds to. Loopback by default: expose it on purpose.' },
  { name: 'REGISTRY_PORT', group: 'registry', default: '`8080`', meaning: 'Port; `0` picks a free one (the log line `registry listening` gives the URL).' },
  { name: 'REGISTRY_PUBLIC_URL', group: 'registry', default: 'listen address', meaning: 'The `http(s)://` URL clients use; it becomes `issuer`, `api_base_url` and `jwks_uri` in the metadata. Set it behind a proxy.' },
  { name: 'REGISTRY_DATA_DIR', group: 'registry', default: '`./data`', meaning: 'Where the embedded SQLite database (`registry.sqlite`) lives.' },
  { name: 'DATABASE_URL', group: 'registry', secret: true, default: 'unset', meaning: '`postgres://…`: use PostgreSQL instead of SQLite.' },
  { name: 'DATABASE_SCHEMA', group: 'registry', default: '`public`', meaning: 'PostgreSQL schema for the tables (created if missing).' },
  { name: 'REDIS_URL', group: 'registry', secret: true, default: 'unset', meaning: 'Shared state for several instances: rate-limit buckets and day counters (operations.md "Rate limits and usage"; unreachable Redis = 503 for API-key requests) and the DPoP replay cache. Unset: both in memory, per instance.' },
  { name: 'REGISTRY_SIGN_RESPONSES', group: 'registry', default: '`true`', meaning: 'Sign discovery and routing answers (`signed_response`).' },
  { name: 'REGISTRY_HEALTH_PROBES', group: 'registry', default: '`true`', meaning: 'Run the endpoint health prober on this instance (only while listening).' },
  { name: 'REGISTRY_HEALTH_INTERVAL_MS', group: 'registry', default: '`30000`', meaning: 'Time between probe rounds; a reading older than three intervals counts as unknown when routing.' },
  { name: 'REGISTRY_HEALTH_TIMEOUT_MS', group: 'registry', default: '`2000`', meaning: 'Timeout of one probe.' },
  { name: 'REGISTRY_LOG_LEVEL', group: 'registry', default: '`info`', meaning: 'pino level: `fatal` … `trace`, or `silent`.' },
  { name: 'REGISTRY_REQUEST_LOG', group: 'registry', default: '`errors`; `all` when `REGISTRY_ENV=production`', meaning: 'The request log: `all` (one line per answer: method, route, id, status, ms; `warn` for 4xx, `error` for 5xx), `errors` (answers of 400 and over only), or `none`. Fastify\'s own two lines per request are off.' },
  { name: 'REGISTRY_CORS_ORIGINS', group: 'registry', default: 'unset', meaning: 'Comma-separated browser origins allowed in production (none when unset); any origin in development.' },
  { name: 'REGISTRY_ALLOW_PRIVATE_ENDPOINTS', group: 'registry', default: '`false`', meaning: 'Allow health probes, federation fetches (a child\'s `jwks_uri`, the parent, children\'s discovery) and agent card reads to private and loopback addresses in production, and agent endpoint URLs (`http://` too) at such addresses (api.md, "Endpoint URLs").' },
  { name: 'REGISTRY_CARD_SIGNATURES', group: 'registry', default: '`if-present`; `required` when `REGISTRY_ENV=production`', meaning: 'How `POST /v1/agents/from-card` and the card re-reads check A2A card signatures: `off` (not checked), `if-present` (a card may be unsigned, but a signature it carries must verify), `required` (an unsigned card is refused with `CARD_UNSIGNED`). See mesh.md, "Signed cards".' },
  { name: 'REGISTRY_CARD_TIMEOUT_MS', group: 'registry', default: '`5000`', meaning: 'One deadline for a whole card read: the card, its redirects and the key sets its signatures name (100–60000); past it the read is `CARD_UNREACHABLE` with reason `timeout`.' },
  { name: 'REGISTRY_CARD_MAX_BYTES', group: 'registry', default: '`65536`', meaning: 'Largest agent card (and JWKS) the registry reads (1024–1048576); a larger one is `CARD_TOO_LARGE`.' },
  { name: 'REGISTRY_CARD_REREAD_INTERVAL_MS', group: 'registry', default: '`3600000`', meaning: 'Time between re-reads of the cards agents were registered from (a changed card updates the record, one that no longer verifies or is gone suspends the agent); `0` turns re-reading off on this instance, otherwise at least `1000`. Runs only while listening.' },
  { name: 'REGISTRY_ATTESTATION_ISSUERS_FILE', group: 'registry', default: 'unset', meaning: 'JSON file `{"issuers":[{"iss":"…","jwks":{"keys":[…]}}]}` of trusted attestation issuers (see trust-validation.md).' },
  { name: 'REGISTRY_AUTH_MODE', group: 'auth', default: '`disabled`', meaning: '`disabled`, `jwt`, `mtls` or `dpop` (auth-modes.md). A token mode without its settings refuses to start.' },
  { name: 'REGISTRY_JWT_JWKS_URI', group: 'auth', default: 'unset', meaning: 'The token issuer\'s JWKS URL (jwt, mtls, dpop).' },
  { name: 'REGISTRY_JWT_ISSUER', group: 'auth', default: 'unset', meaning: 'The `iss` tokens must carry (jwt, mtls, dpop).' },
  { name: 'REGISTRY_JWT_AUDIENCE', group: 'auth', default: 'unset', meaning: 'A value tokens\' `aud` must contain (jwt, mtls, dpop).' },
  { name: 'REGISTRY_TLS_CERT_FILE', group: 'auth', default: 'unset', meaning: 'PEM server certificate: the registry serves HTTPS (required for mtls).' },
  { name: 'REGISTRY_TLS_KEY_FILE', group: 'auth', default: 'unset', meaning: 'PEM private key of that certificate.' },
  { name: 'REGISTRY_MTLS_CA_FILE', group: 'auth', default: 'unset', meaning: 'PEM CA that client certificates must chain to (mtls).' },
  { name: 'REGISTRY_MTLS_CRL_FILE', group: 'auth', default: 'unset', meaning: '`mtls` mode: PEM CRL(s) of the client CA; revoked client certificates fail the handshake (docs/auth-modes.md).' },
  { name: 'REGISTRY_DPOP_NONCES', group: 'auth', default: '`false`', meaning: '`dpop` mode: require server-issued DPoP nonces in every proof (docs/auth-modes.md).' },
  { name: 'REGISTRY_API_KEY_SECRET', group: 'auth', secret: true, default: 'unset', meaning: 'HMAC secret (≥ 32 characters) for stored API-key hashes, shared by every instance; unset, one is made on first start and kept in storage.' },
  { name: 'REGISTRY_SIGNING_ALG', group: 'auth', default: '`ES256`', meaning: 'Algorithm of the signing key created on first start: `ES256`, `EdDSA` or `RS256`.' },
  { name: 'REGISTRY_KEY_ENCRYPTION_KEY', group: 'auth', secret: true, default: 'unset', meaning: 'Key-encryption key sealing the signing keys at rest: 32 bytes in base64 or hex (docs/security.md, "Signing keys at rest").' },
  { name: 'REGISTRY_KEY_ENCRYPTION_KEY_FILE', group: 'auth', default: 'unset', meaning: 'The same, read from a file; not with `REGISTRY_KEY_ENCRYPTION_KEY`.' },
  { name: 'REGISTRY_KEY_ENCRYPTION_KEY_PREVIOUS', group: 'auth', secret: true, default: 'unset', meaning: 'Earlier key-encryption keys, comma-separated, while rotating: keys sealed under them are sealed again under the current one at start.' },
  { name: 'REGISTRY_KEY_LIFETIME_DAYS', group: 'auth', default: '`365`', meaning: 'How long a new signing key is valid (its trust anchor\'s `not_after`), 2–3650 days.' },
  { name: 'REGISTRY_KEY_RENEW_DAYS', group: 'auth', default: '`30`', meaning: 'Rotate the signing key this many days before its `not_after` (docs/federation.md, "Key validity and renewal"); `0` turns renewal off and only warns. Must be less than the lifetime.' },
  { name: 'DATABASE_POOL_SIZE', group: 'limits', default: '`10`', meaning: 'PostgreSQL connections per instance.' },
  { name: 'REGISTRY_PHI_MAX_TEXT_CHARS', group: 'limits', default: '`262144`', meaning: 'Text (string values and member names, in characters) a request body may hold for the PHI guard to read (16384–1048576); a body with more is refused with 413 `PAYLOAD_TOO_LARGE` before it is scanned. Bodies with more than 16384 characters of text are scanned in a worker thread, off the event loop. See performance.md, "The PHI guard under a flood".' },
  { name: 'REGISTRY_OIDF_RESOLVE_FETCHES_PER_MINUTE', group: 'limits', default: '`60`', meaning: 'Fetches of other entities (entity configurations, subordinate statements, trust mark statuses) a minute that `GET /v1/oidf/resolve` may make for one client address, across all its requests (12–1000000); once spent, a resolve is refused with 429 `temporarily_unavailable` and `Retry-After` before it fetches anything more. Counted per instance.' },
  { name: 'REGISTRY_FEDERATION_RATE_PER_MINUTE', group: 'limits', default: '`120`', meaning: 'Requests a minute each client address may make to the public federation routes (`/v1/federation/fetch`, `/status`, `/.well-known/openid-federation` and the `/v1/oidf/` endpoints, trust marks included), one bucket for all; `0` turns the limit off.' },
  { name: 'REGISTRY_DISCOVERY_CACHE_ENTRIES', group: 'limits', default: '`1000`', meaning: 'Signed discovery answers kept per instance (0 = off), and as many FHIR search answers; see discovery.md and fhir.md.' },
  { name: 'REGISTRY_DISCOVERY_KEPT_ROWS', group: 'limits', default: '`10000`', meaning: 'Agent rows discovery keeps per instance between answers, reused while their version is current (0 = none, at most 100 000; about 1.6–6 kB each); see discovery.md.' },
  { name: 'REGISTRY_HEALTH_CONCURRENCY', group: 'limits', default: '`16`', meaning: 'Probes in flight at once.' },
  { name: 'REGISTRY_EVENT_RETENTION_DAYS', group: 'limits', default: '`30`', meaning: 'Days events stay in the change stream (1–36500). Older ones are pruned every 10 minutes by each instance; a stream cursor from before the oldest kept event gets 410 `CURSOR_EXPIRED`. The transparency ledger keeps every entry regardless.' },
  { name: 'REGISTRY_SHUTDOWN_GRACE_MS', group: 'limits', default: '`15000`', meaning: 'On SIGTERM or SIGINT, how long in-flight requests may take to finish before the process exits anyway (status 1, with a log line saying so). `ward registry` and `ward start`.' },
  { name: 'REGISTRY_SHUTDOWN_DRAIN_MS', group: 'limits', default: '`0`', meaning: 'On SIGTERM or SIGINT, how long `ward registry` keeps serving with `/readyz` at 503 before it starts to close, so the balancer\'s health check takes it out of rotation first (a rolling restart with no failed request: give it at least the check\'s interval × its fall count, e.g. 2000 for HAProxy `inter 500ms fall 2`; Kubernetes: more than the readiness probe\'s period × failureThreshold). `ward cluster up` sets 2000 unless you set it.' },
  { name: 'REGISTRY_TIER', group: 'federation', default: '`root`', meaning: '`root`, `sovereign` or `organisational`.' },
  { name: 'REGISTRY_JURISDICTION', group: 'federation', default: '`GB`', meaning: 'ISO 3166-1 alpha-2 code of this registry (either case).' },
  { name: 'REGISTRY_NAME', group: 'federation', default: '`local`', meaning: 'Lower-case name; the registry URI is `registry://<jurisdiction>/registries/<name>`.' },
  { name: 'REGISTRY_PARENT_URL', group: 'federation', default: 'unset', meaning: 'The parent registry\'s base URL. The registry then fetches its delegation chain from the parent and keeps it fresh (docs/federation.md). Unset: the registry is its own trust anchor.' },
  { name: 'REGISTRY_DELEGATION_TTL_SECONDS', group: 'federation', default: '`900`', meaning: 'Lifetime of each delegation statement this registry issues to a child (60–86400). Short, so an offline copy of a revoked child\'s chain stops verifying soon.' },
  { name: 'REGISTRY_FEDERATION_TIMEOUT_MS', group: 'federation', default: '`2000`', meaning: 'The deadline of a federated discovery\'s whole fan-out to the children (a child asked by its parent keeps within the parent\'s budget), of fetching a child\'s keys at registration, and of each fetch from the parent (100–60000).' },
  { name: 'MESH_JWT_SECRET', group: 'mesh', secret: true, default: '`mesh-dev-secret-change-me`', meaning: 'HS256 secret of the mesh.' },
  { name: 'GATEWAY_PORT', group: 'mesh', default: '`8100`', meaning: 'Mesh gateway (mesh release).' },
  { name: 'GATEWAY_URL', group: 'mesh', readBy: 'console', default: '`http://127.0.0.1:$GATEWAY_PORT`', meaning: 'Where the console finds the mesh gateway\'s `/health`.' },
  { name: 'CONSOLE_PORT', group: 'console', readBy: 'console', default: '`3000`', meaning: 'Admin console port (`0` = any free port; it logs `console listening` with its URL).' },
  { name: 'CONSOLE_HOST', group: 'console', readBy: 'console', default: '`127.0.0.1`', meaning: 'Address the console binds to. Off loopback it always asks for sign-in.' },
  { name: 'CONSOLE_URL', group: 'console', readBy: 'console', default: '`http://127.0.0.1:$CONSOLE_PORT`', meaning: 'The console\'s public origin (read by the console and by the registry, for computer use).' },
  { name: 'REGISTRY_URL', group: 'console', readBy: 'console', default: '`http://127.0.0.1:$REGISTRY_PORT`', meaning: 'Where the console finds the registry (`ward mcp` reads it too, without a default: see below).' },
  { name: 'CONSOLE_MCP_URL', group: 'console', readBy: 'console', default: '`http://127.0.0.1:8090/mcp`; under `ward start`, the MCP tools it starts on a free loopback port', meaning: 'The MCP server (streamable HTTP) whose tools the console\'s try page lists and calls.' },
  { name: 'CONSOLE_TLS_CERT_FILE', group: 'console', readBy: 'console', default: 'unset', meaning: 'PEM certificate: the console serves HTTPS (with `CONSOLE_TLS_KEY_FILE`).' },
  { name: 'CONSOLE_TLS_KEY_FILE', group: 'console', readBy: 'console', default: 'unset', meaning: 'PEM private key of that certificate.' },
  { name: 'CONSOLE_ALLOWED_ORIGINS', group: 'console', readBy: 'console', default: 'unset', meaning: 'Comma-separated `https://` origins of a TLS-terminating proxy in front of the console; forms are accepted from these and the console\'s own origin only.' },
  { name: 'CONSOLE_TRUST_PROXY', group: 'console', readBy: 'console', default: 'unset', meaning: 'Comma-separated addresses (or CIDR ranges) of that proxy: only its `X-Forwarded-Proto`/`-For` are believed. Required in production without local TLS.' },
  { name: 'CONSOLE_SESSION_IDLE_MINUTES', group: 'console', readBy: 'console', default: '`30`', meaning: 'A session unused this long ends (1–1440).' },
  { name: 'CONSOLE_SESSION_MAX_HOURS', group: 'console', readBy: 'console', default: '`12`', meaning: 'A session ends this long after sign-in, used or not (1–168).' },
  { name: 'CONSOLE_REGISTRY_TIMEOUT_MS', group: 'console', readBy: 'console', default: '`10000`', meaning: 'Timeout of each registry call the console makes (100–120000).' },
  { name: 'CONSOLE_LOG_LEVEL', group: 'console', readBy: 'console', default: '`info`', meaning: 'pino level of the console (`ward start` uses `REGISTRY_LOG_LEVEL` unless this is set).' },
  { name: 'CONSOLE_REQUEST_LOG', group: 'console', readBy: 'console', default: 'as `REGISTRY_REQUEST_LOG`', meaning: 'The console\'s request log (`ward start` uses `REGISTRY_REQUEST_LOG` unless this is set).' },
  { name: 'CHROMIUM_PATH', group: 'computer-use', default: '`/usr/bin/chromium`', meaning: 'Debian\'s Chromium, which computer use drives through playwright-core (docs/computer-use.md). Absent: computer use answers 503 naming `browser`.' },
  { name: 'COMPUTER_USE_ALLOWED_ORIGINS', group: 'computer-use', default: 'the console\'s origin', meaning: 'Comma-separated origins computer use may open besides the console\'s own, which is always allowed; every hop of every request elsewhere is refused by the browser\'s origin-guard proxy (computer-use.md).' },
  { name: 'COMPUTER_USE_MODEL_URL', group: 'computer-use', default: 'the vendor\'s', meaning: 'Base URL of the Messages API (a gateway, or a stand-in on loopback in tests).' },
  { name: 'COMPUTER_USE_API_KEY', group: 'computer-use', secret: true, default: 'unset', meaning: 'The model\'s API key (redacted in diagnostics).' },
  { name: 'COMPUTER_USE_MODEL', group: 'computer-use', default: '`claude-sonnet-4-6`', meaning: 'The model computer-use runs ask. The computer tool version follows it: `computer_20250124` for Claude 3.7 and the 4 models up to Sonnet and Haiku 4.5, `computer_20251124` for every later model.' },
  { name: 'COMPUTER_USE_MODEL_TIMEOUT_SECONDS', group: 'computer-use', default: '`120`', meaning: 'How long one model call may take; a run whose model does not answer in time fails with that reason.' },
  { name: 'COMPUTER_USE_MAX_RUNS', group: 'computer-use', default: '`2`', meaning: 'Runs at once (1–16); the rest wait.' },
  { name: 'COMPUTER_USE_DEMO_MODEL_PORT', group: 'computer-use', default: '`8190`', meaning: 'Port of the demonstration model `ward computer-use demo-model` starts on loopback (`0` = any free port; docs/computer-use.md, "Trying it without a paid model").' },
];

const BY_NAME = new Map(SETTINGS.map((setting) => [setting.name, setting]));

export function settingNamed(name: string): Setting | undefined {
  return BY_NAME.get(name);
}

/** Secrets and URLs that may carry a password: never shown, never sent. */
export function isSecretSetting(name: string): boolean {
  return BY_NAME.get(name)?.secret === true;
}

/** Where each of `names` came from in `env` (empty strings count as unset, as when reading it). */
export function settingSources(names: readonly string[], env: Record<string, string | undefined>): Record<string, SettingSource> {
  const set = (name: string | undefined) => name !== undefined && env[name] !== undefined && env[name] !== '';
  const sources: Record<string, SettingSource> = {};
  for (const name of names) sources[name] = set(name) ? 'environment' : set(READ_FROM_FILE[name]) ? 'file' : 'default';
  return sources;
}

const remembered = new WeakMap<object, Record<string, SettingSource>>();

/** Keeps where a loaded configuration's values came from, for the settings page. */
export function rememberSources<T extends object>(config: T, sources: Record<string, SettingSource>): T {
  remembered.set(config, Object.freeze(sources));
  return config;
}

/** Where a configuration's values came from; undefined for one not loaded from an environment. */
export function sourcesOf(config: object): Readonly<Record<string, SettingSource>> | undefined {
  return remembered.get(config);
}
