/**
 * `ward federation up` (docs/federation.md): three real registry processes — a root, a sovereign
 * registry for GB and an organisational registry under it — each on its own SQLite database and
 * port, wired together through the public API exactly as operators would do it, with a few agents,
 * so a newcomer sees a real three-tier chain in one command.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRegistryClient, type RegistryClient } from '../client/registry-client.ts';

const WARD_CLI = fileURLToPath(new URL('../cli/ward.ts', import.meta.url));
const READY_TIMEOUT_MS = 30_000;

export type TierSpec = {
  key: 'root' | 'sovereign' | 'organisation';
  tier: 'root' | 'sovereign' | 'organisational';
  name: string;
  jurisdiction: string;
  /** The organisation's name as written (acronyms kept); the name's words capitalised otherwise. */
  title?: string;
};

/** The three registries, parent first. */
export const FEDERATION_TIERS: readonly TierSpec[] = [
  { key: 'root', tier: 'root', name: 'root', jurisdiction: 'GB' },
  { key: 'sovereign', tier: 'sovereign', name: 'nhs-england', jurisdiction: 'GB', title: 'NHS England' },
  { key: 'organisation', tier: 'organisational', name: 'leeds-teaching-hospitals', jurisdiction: 'GB' },
];

export type RunningTier = TierSpec & { url: string; registryId: string; process: ChildProcess };

export type Federation = {
  tiers: RunningTier[];
  /** Agent URIs seeded per registry key. */
  agents: Record<string, string[]>;
  /** Stops every registry process (SIGTERM, then SIGKILL after a grace period). */
  stop(): Promise<void>;
};

export type FederationUpOptions = {
  /** Parent directory of the three data directories. */
  dataDir: string;
  /** Port of the root; the sovereign and the organisation take the next two. 0: any free ports. */
  basePort: number;
  /** Extra environment for every registry (tests: signing algorithm, statement lifetime). */
  env?: Record<string, string>;
  log?: (line: string) => void;
};

/** Starts, wires and seeds the three registries; on any failure stops what it started. */
export async function federationUp(options: FederationUpOptions): Promise<Federation> {
  const tiers: RunningTier[] = [];
  const stop = async () => {
    await Promise.all(tiers.map((tier) => stopRegistryProcess(tier.process)));
  };
  try {
    for (const [index, spec] of FEDERATION_TIERS.entries()) {
      const parent = tiers[index - 1];
      const port = options.basePort === 0 ? 0 : options.basePort + index;
      const started = await startRegistryProcess(spec, { port, dataDir: join(options.dataDir, spec.name), parentUrl: parent?.url, env: options.env ?? {} });
      tiers.push({ ...spec, ...started });
      options.log?.(`started ${spec.tier} registry ${registryIdOf(spec)} at ${tiers[index]?.url}`);
    }
    for (let index = 1; index < tiers.length; index += 1) {
      await delegate(tiers[index - 1] as RunningTier, tiers[index] as RunningTier);
      await waitForChain(tiers[index] as RunningTier, index + 1);
    }
    const agents = await seedAgents(tiers);
    return { tiers, agents, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

export function registryIdOf(spec: Pick<TierSpec, 'jurisdiction' | 'name'>): string {
  return `registry://${spec.jurisdiction.toLowerCase()}/registries/${spec.name}`;
}

export type RegistryProcessSettings = {
  port: number;
  dataDir: string;
  parentUrl?: string | undefined;
  env?: Record<string, string>;
  /** The `ward` entry point to run (default src/cli/ward.ts; a test runs another build's). */
  script?: string;
};

/**
 * Runs `ward registry` as a child process for one tier (its own SQLite database in `dataDir`,
 * loopback, authentication disabled, no health probes) and waits for the address it logs. Stop it
 * with {@link stopRegistryProcess}.
 */
export async function startRegistryProcess(
  spec: Pick<TierSpec, 'tier' | 'name' | 'jurisdiction'>,
  settings: RegistryProcessSettings,
): Promise<{ url: string; registryId: string; process: ChildProcess }> {
  const env: Record<string, string> = {};
  // Each registry has its own embedded database: nothing of the caller's storage settings applies.
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !/^(REGISTRY_|DATABASE_|REDIS_)/.test(key)) env[key] = value;
  }
  Object.assign(env, {
    REGISTRY_ENV: 'development',
    REGISTRY_HOST: '127.0.0.1',
    REGISTRY_PORT: String(settings.port),
    REGISTRY_DATA_DIR: settings.dataDir,
    REGISTRY_TIER: spec.tier,
    REGISTRY_NAME: spec.name,
    REGISTRY_JURISDICTION: spec.jurisdiction,
    REGISTRY_AUTH_MODE: 'disabled',
    // The seeded agents' endpoints are examples; probing them would only log failures.
    REGISTRY_HEALTH_PROBES: 'false',
    ...(settings.parentUrl ? { REGISTRY_PARENT_URL: settings.parentUrl } : {}),
    ...(settings.env ?? {}),
    // The address is read from the "registry listening" line, logged at info.
    REGISTRY_LOG_LEVEL: 'info',
  });
  const child = spawn(process.execPath, [settings.script ?? WARD_CLI, 'registry'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  const onStderr = (chunk: string) => {
    stderr = (stderr + chunk).slice(-4096);
  };
  child.stderr?.setEncoding('utf8').on('data', onStderr);
  let onStdout: (chunk: string) => void = () => {};
  let onExit: (code: number | null) => void = () => {};
  const listening = new Promise<string>((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => reject(new Error(`${spec.name} did not start within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
    onStdout = (chunk: string) => {
      buffered += chunk;
      for (const line of buffered.split('\n').slice(0, -1)) {
        const entry = parseLogLine(line);
        if (entry?.msg === 'registry listening' && typeof entry.url === 'string') {
          clearTimeout(timer);
          resolve(entry.url);
        }
      }
      buffered = buffered.slice(buffered.lastIndexOf('\n') + 1);
    };
    onExit = (code) => {
      clearTimeout(timer);
      reject(new Error(`${spec.name} exited with ${code}: ${stderr.trim().split('\n').slice(-3).join(' ')}`));
    };
    child.stdout?.setEncoding('utf8').on('data', onStdout);
    child.once('exit', onExit);
  }).finally(() => {
    child.stdout?.off('data', onStdout);
    child.off('exit', onExit);
  });
  const url = await listening.catch(async (error: unknown) => {
    await stopRegistryProcess(child);
    throw error;
  });
  // Started: the log keeps flowing; drain it unread so the child never blocks on a full pipe.
  child.stderr?.off('data', onStderr);
  child.stdout?.resume();
  child.stderr?.resume();
  return { url, registryId: registryIdOf(spec), process: child };
}

function parseLogLine(line: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** Registers `child` at `parent` with the anchors the child publishes; an existing registration is kept. */
async function delegate(parent: RunningTier, child: RunningTier): Promise<void> {
  const published = await clientOf(child).trustAnchors();
  if (!published.ok) throw new Error(`reading the anchors of ${child.registryId} failed: ${published.text}`);
  const anchors = published.body.anchors.map(({ key_id, alg, jwks_uri, thumbprint_sha256 }) => ({ key_id, alg, jwks_uri, thumbprint_sha256 }));
  const registered = await clientOf(parent).registerRegistry(
    { display_name: displayName(child), name: child.name, jurisdiction: child.jurisdiction, tier: child.tier as 'sovereign' | 'organisational', trust_anchors: anchors, api_base_url: child.url },
    { idempotencyKey: randomUUID() },
  );
  if (registered.ok) return;
  // Started again on the same directory: the child is already registered.
  if (registered.status === 409 && registered.envelope.error.details.registry_id === child.registryId) return;
  throw new Error(`registering ${child.registryId} at ${parent.registryId} failed: ${registered.status} ${registered.text}`);
}

function clientOf(tier: RunningTier): RegistryClient {
  return createRegistryClient({ baseUrl: tier.url, userAgent: 'ward-federation-up' });
}

/** The child fetches its grant on its own (retrying while it was not registered yet); wait for it. */
async function waitForChain(tier: RunningTier, length: number): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const bundle = await clientOf(tier).trustBundle(tier.registryId);
    if (bundle.ok && bundle.body.delegation_chain.length === length && bundle.body.statements.length === length - 1) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${tier.registryId} did not receive its delegation within ${READY_TIMEOUT_MS} ms`);
}

const SEED: Record<RunningTier['key'], Array<{ display_name: string; skills: string[]; description: string }>> = {
  root: [],
  sovereign: [
    { display_name: 'National urgent care triage', skills: ['triage.assess'], description: 'Rule-based urgency assessment offered nationally.' },
  ],
  organisation: [
    { display_name: 'Emergency department triage', skills: ['triage.assess'], description: 'Urgency assessment for the emergency department.' },
    { display_name: 'Consent verification', skills: ['consent.verify'], description: 'Checks recorded consent before data is shared.' },
  ],
};

async function seedAgents(tiers: RunningTier[]): Promise<Record<string, string[]>> {
  const agents: Record<string, string[]> = {};
  for (const tier of tiers) {
    agents[tier.key] = [];
    for (const seed of SEED[tier.key]) {
      const host = `${tier.name}.example.org`;
      const response = await clientOf(tier).registerAgent(
        {
          display_name: seed.display_name,
          jurisdiction: tier.jurisdiction,
          description: seed.description,
          endpoints: [{ url: `https://${host}/a2a/${seed.skills[0]}`, protocol: 'mesh-a2a-jsonrpc', priority: 10, region: 'uk-south' }],
          capabilities: { protocols: ['mesh-a2a-jsonrpc'], skills: seed.skills },
          trust: { certificates: [], signatures: [], attestations: [] },
          owner: { org_id: `org-${tier.name}`, org_name: displayName(tier), operator: `ops@${host}` },
          policy_tags: { purpose_of_use: ['treatment'] },
        },
        { idempotencyKey: randomUUID() },
      );
      if (response.ok) agents[tier.key]?.push(response.body.agent_id);
      else if (response.status !== 409) throw new Error(`seeding ${seed.display_name} failed: ${response.status} ${response.text}`);
    }
  }
  return agents;
}

function displayName(tier: TierSpec): string {
  if (tier.title !== undefined) return tier.title;
  return tier.name
    .split('-')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(' ');
}

/** Stops a registry process (SIGTERM, or `signal`; SIGKILL after a grace period) and waits for it to exit. */
export async function stopRegistryProcess(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}
