import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Clock } from '../../../src/core/clock.ts';
import { loadManifest } from '../../../src/mesh/gateway/manifest.ts';
import { startGateway, type RunningGateway } from '../../../src/mesh/gateway/gateway-server.ts';
import { loadMeshConfig } from '../../../src/mesh/mesh-config.ts';
import { authHeaders, tempDir } from '../helpers.ts';

export const FIXTURES = fileURLToPath(new URL('../fixtures/agents/', import.meta.url));

type Hookable = Pick<TestContext, 'after'>;

export type FixtureAgent = {
  entry: 'probe' | 'never-healthy' | 'fails-at-start' | string;
  dependencies?: string[];
  idle_timeout_ms?: number;
  start_timeout_ms?: number;
  /** The manifest port (default 0); the gateway uses it only with GATEWAY_AGENT_PORTS=manifest. */
  port?: number;
  /** The agent's web page (a path on the agent). */
  page?: string;
};

/** The environment of this process without mesh or registry settings: children see only what the gateway gives them. */
function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !/^(REGISTRY_|DATABASE_|MESH_|GATEWAY_|AGENT_|DID_)/.test(key)) env[key] = value;
  }
  return env;
}

/**
 * A gateway on 127.0.0.1 and a free port, with a manifest of fixture agents (ports 0), real child
 * processes, and everything stopped when the test ends.
 */
export async function startTestGateway(
  t: Hookable,
  agents: Record<string, FixtureAgent>,
  options: { env?: Record<string, string>; clock?: Clock; idleSweep?: false } = {},
): Promise<RunningGateway & { dataDir: string }> {
  const dataDir = tempDir(t, 'ward-gateway-');
  const manifestPath = join(dataDir, 'manifest.json');
  const manifest = {
    agents: Object.fromEntries(
      Object.entries(agents).map(([alias, agent]) => [
        alias,
        {
          entry: agent.entry.startsWith('/') ? agent.entry : join(FIXTURES, `${agent.entry}.ts`),
          port: agent.port ?? 0,
          dependencies: agent.dependencies ?? [],
          ...(agent.idle_timeout_ms === undefined ? {} : { idle_timeout_ms: agent.idle_timeout_ms }),
          ...(agent.start_timeout_ms === undefined ? {} : { start_timeout_ms: agent.start_timeout_ms }),
          ...(agent.page === undefined ? {} : { page: agent.page }),
        },
      ]),
    ),
  };
  writeFileSync(manifestPath, JSON.stringify(manifest));
  const config = loadMeshConfig({
    REGISTRY_ENV: 'test',
    MESH_DATA_DIR: join(dataDir, 'mesh'),
    MESH_MANIFEST: manifestPath,
    GATEWAY_PORT: '0',
    MESH_LOG_LEVEL: 'info',
    GATEWAY_START_TIMEOUT_MS: '20000',
    GATEWAY_RESTART_BACKOFF_MS: '100',
    ...options.env,
  });
  const gateway = await startGateway(config, {
    manifest: loadManifest(manifestPath),
    logger: false,
    childEnv: cleanEnv(),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.idleSweep === false ? { idleSweep: false as const } : {}),
  });
  t.after(() => gateway.close());
  return { ...gateway, dataDir };
}

/** The gateway's /health as an authenticated mesh caller (log tails included). */
export async function gatewayHealth(gateway: RunningGateway): Promise<any> {
  return (await fetch(`${gateway.url}/health`, { headers: await authHeaders() })).json();
}

export async function agentHealth(gateway: RunningGateway, alias: string): Promise<any> {
  const health = await gatewayHealth(gateway);
  return health.agents.find((agent: { alias: string }) => agent.alias === alias);
}

/** Whether a process id is alive. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
