import { join, resolve } from 'node:path';
import { Type, type Static } from 'typebox';
import { ConfigSchema, DEFAULT_MESH_JWT_SECRET } from '../core/config.ts';
import { ConfigError, readEnvironment } from '../core/env-schema.ts';

const Port = Type.Integer({ minimum: 0, maximum: 65535 });
/** The variables the mesh shares with the registry, defined once (src/core/config.ts). */
const shared = ConfigSchema.properties;
const Millis = (defaultValue: number, minimum = 1) =>
  Type.Integer({ minimum, maximum: 24 * 60 * 60 * 1000, default: defaultValue });

/**
 * The mesh's configuration (contract §1, §9, §10): one schema with defaults, read once from the
 * environment, validated and frozen. Kept apart from the registry's `src/core/config.ts` because the
 * gateway and agents run without a registry; the production switch (`REGISTRY_ENV`) and the shared
 * secret (`MESH_JWT_SECRET`) are the same variables. docs/mesh.md lists every variable.
 */
export const MeshConfigSchema = Type.Object({
  REGISTRY_ENV: shared.REGISTRY_ENV,
  MESH_HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  MESH_JWT_SECRET: shared.MESH_JWT_SECRET,
  MESH_JWT_MAX_TTL: Type.Integer({ minimum: 1, maximum: 7 * 24 * 3600, default: 3600 }),
  /** Unset: `<REGISTRY_DATA_DIR>/mesh`, so one data directory holds everything by default. */
  MESH_DATA_DIR: Type.Optional(Type.String({ minLength: 1 })),
  REGISTRY_DATA_DIR: shared.REGISTRY_DATA_DIR,
  MESH_MANIFEST: Type.Optional(Type.String({ minLength: 1 })),
  MESH_LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
    { default: 'info' },
  ),
  /** As REGISTRY_REQUEST_LOG, for the gateway's requests. */
  MESH_REQUEST_LOG: shared.REGISTRY_REQUEST_LOG,
  MESH_DID_DOMAIN: Type.String({ pattern: '^[A-Za-z0-9.%-]+$', default: 'localhost' }),
  MESH_GATEWAY_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  MESH_CONSENT_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  MESH_SIGNING_KEY_FILE: Type.Optional(Type.String({ minLength: 1 })),
  AGENT_PORT: Type.Optional(Port),
  AGENT_PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  GATEWAY_PORT: shared.GATEWAY_PORT,
  GATEWAY_START_TIMEOUT_MS: Millis(15_000),
  /** `0` keeps agents running until the gateway stops. */
  GATEWAY_IDLE_TIMEOUT_MS: Millis(10 * 60 * 1000, 0),
  GATEWAY_RESTART_BACKOFF_MS: Millis(500),
  GATEWAY_RESTART_BACKOFF_MAX_MS: Millis(30_000),
  GATEWAY_REQUEST_TIMEOUT_MS: Millis(60_000),
  GATEWAY_PHI_GUARD: Type.Boolean({ default: true }),
  /**
   * `free`: the gateway's agents listen on ports the system picks (nothing else on the machine can
   * collide with them); `manifest`: on their manifest ports (for a firewall or a proxy in front).
   */
  GATEWAY_AGENT_PORTS: Type.Union([Type.Literal('free'), Type.Literal('manifest')], { default: 'free' }),
  /**
   * Agents presented at the root of a listener of their own, for A2A clients that find one agent per
   * host (`/.well-known/agent-card.json`): `alias=port[,alias=port…]`, port `0` for any free port.
   */
  GATEWAY_ROOT_LISTENERS: Type.Optional(Type.String({ pattern: '^[a-z][a-z0-9_-]{0,62}=\\d{1,5}(,[a-z][a-z0-9_-]{0,62}=\\d{1,5})*$' })),
  DID_VERIFY: Type.Boolean({ default: false }),
  DID_WEB_DIR: Type.Optional(Type.String({ minLength: 1 })),
  /** The speech engine the clinician avatar runs as a separate process (a name on PATH or a path). */
  ESPEAK_NG_PATH: Type.String({ minLength: 1, default: 'espeak-ng' }),
});

type MeshConfigShape = Static<typeof MeshConfigSchema>;

/** The validated, frozen mesh configuration; `MESH_DATA_DIR` is always resolved to an absolute path. */
export type MeshConfig = Readonly<Omit<MeshConfigShape, 'MESH_DATA_DIR'> & { MESH_DATA_DIR: string }>;

/**
 * Loads the mesh configuration from an environment map (default `process.env`). Empty strings count
 * as unset. Throws `ConfigError` naming the first bad variable; with `REGISTRY_ENV=production` the
 * default or a short `MESH_JWT_SECRET` is refused (contract §9), for the gateway and every agent.
 */
export function loadMeshConfig(env: Record<string, string | undefined> = process.env): MeshConfig {
  const shape = readEnvironment(MeshConfigSchema, env) as MeshConfigShape;
  const config = {
    ...shape,
    REGISTRY_DATA_DIR: resolve(shape.REGISTRY_DATA_DIR),
    MESH_DATA_DIR: resolve(shape.MESH_DATA_DIR ?? join(shape.REGISTRY_DATA_DIR, 'mesh')),
  };
  if (config.GATEWAY_RESTART_BACKOFF_MAX_MS < config.GATEWAY_RESTART_BACKOFF_MS) {
    throw new ConfigError('GATEWAY_RESTART_BACKOFF_MAX_MS', 'must not be below GATEWAY_RESTART_BACKOFF_MS');
  }
  if (config.REGISTRY_ENV === 'production') checkMeshProductionGuards(config);
  rootListenerPorts(config);
  return Object.freeze(config);
}

/**
 * `GATEWAY_ROOT_LISTENERS` as alias → port. Refused: a port over 65535, an alias named twice, two
 * agents on one port, or the gateway's own port. Whether each alias is in the manifest is checked
 * when the gateway starts (the manifest is read there).
 */
export function rootListenerPorts(config: Pick<MeshConfig, 'GATEWAY_ROOT_LISTENERS' | 'GATEWAY_PORT'>): ReadonlyMap<string, number> {
  const ports = new Map<string, number>();
  if (config.GATEWAY_ROOT_LISTENERS === undefined) return ports;
  for (const pair of config.GATEWAY_ROOT_LISTENERS.split(',')) {
    const [alias = '', text = ''] = pair.split('=');
    const port = Number(text);
    if (port > 65535) throw new ConfigError('GATEWAY_ROOT_LISTENERS', `${alias}: port ${port} is over 65535`);
    if (ports.has(alias)) throw new ConfigError('GATEWAY_ROOT_LISTENERS', `${alias} is named twice`);
    if (port !== 0 && port === config.GATEWAY_PORT) throw new ConfigError('GATEWAY_ROOT_LISTENERS', `${alias}: port ${port} is the gateway's own (GATEWAY_PORT)`);
    const other = [...ports].find(([, taken]) => taken !== 0 && taken === port);
    if (other) throw new ConfigError('GATEWAY_ROOT_LISTENERS', `${alias} and ${other[0]} both use port ${port}`);
    ports.set(alias, port);
  }
  return ports;
}

/** Contract §9 for the mesh: a strong, non-default secret; no local stand-in for did:web. */
function checkMeshProductionGuards(config: MeshConfig): void {
  if (config.MESH_JWT_SECRET === DEFAULT_MESH_JWT_SECRET) {
    throw new ConfigError('MESH_JWT_SECRET', 'the default development secret is refused in production');
  }
  if (Buffer.byteLength(config.MESH_JWT_SECRET) < 32) {
    throw new ConfigError('MESH_JWT_SECRET', 'must be at least 32 bytes in production');
  }
  if (config.DID_WEB_DIR !== undefined) {
    // A local directory replaces the web origin as the source of agents' keys: development only.
    throw new ConfigError('DID_WEB_DIR', 'resolving did:web from a local directory is refused in production');
  }
}

/** The DID a shipped agent speaks as: `did:web:<MESH_DID_DOMAIN>:agents:<alias>` (spec: Mesh auth). */
export function agentDid(config: Pick<MeshConfig, 'MESH_DID_DOMAIN'>, alias: string): string {
  return `did:web:${config.MESH_DID_DOMAIN}:agents:${alias}`;
}
