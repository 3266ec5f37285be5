/**
 * `npm start` as a person runs it (a real child process, the default probe interval): within one
 * probe interval of the agents being registered, every shipped agent's endpoint has a real, probed
 * health (the registry's prober reading the gateway's per-agent health and the agent's card), and an
 * agent registered without a health URL says why it is not probed rather than looking broken.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { SHIPPED_AGENTS } from '../../src/mesh/registration.ts';
import { eventually } from '../helpers/eventually.ts';
import { groupAlive, groupExited } from '../helpers/ward-process.ts';

const root = new URL('../..', import.meta.url).pathname;
/** REGISTRY_HEALTH_INTERVAL_MS's default (docs/configuration.md): the test leaves it as it is. */
const PROBE_INTERVAL_MS = 30_000;

type Endpoint = { url: string; health_url?: string; health: { status: string; checked_at: string | null; reason: string | null } };
type Agent = { agent_id: string; display_name: string; endpoints: Endpoint[]; policy_tags?: { mesh_alias?: string } };

describe('npm start: health out of the box', () => {
  test('every shipped agent is probed healthy within one probe interval; an unprobeable one says why', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'ward-npm-health-'));
    const env: Record<string, string | undefined> = { ...process.env, REGISTRY_DATA_DIR: dir, MESH_DATA_DIR: join(dir, 'mesh'), REGISTRY_PORT: '0', GATEWAY_PORT: '0', CONSOLE_PORT: '0', DATABASE_URL: '' };
    delete env.REGISTRY_HEALTH_INTERVAL_MS;
    delete env.REGISTRY_HEALTH_PROBES;
    const npm = spawn('npm', ['start'], { cwd: root, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const pgid = npm.pid as number;
    t.after(async () => {
      if (groupAlive(pgid)) process.kill(-pgid, 'SIGTERM');
      if (!(await groupExited(pgid, 10_000))) process.kill(-pgid, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    });
    let output = '';
    const { registryUrl, gatewayUrl } = await new Promise<{ registryUrl: string; gatewayUrl: string }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`npm start did not come up:\n${output}`)), 60_000);
      npm.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const registry = /Ward registry:\s+(http:\/\/\S+)/.exec(output);
        const gateway = /Mesh gateway:\s+(http:\/\/\S+)/.exec(output);
        if (registry && gateway && /Mesh agents registered/.test(output)) {
          clearTimeout(timer);
          resolve({ registryUrl: registry[1] as string, gatewayUrl: gateway[1] as string });
        }
      });
      npm.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      npm.on('exit', (code) => reject(new Error(`npm start exited with ${code}:\n${output}`)));
    });
    const registered = new Date().toISOString();

    const shipped = async (): Promise<Agent[]> => {
      const page = (await (await fetch(`${registryUrl}/v1/agents?limit=100`)).json()) as { agents: Agent[] };
      return page.agents.filter((agent) => SHIPPED_AGENTS.some((info) => info.alias === agent.policy_tags?.mesh_alias));
    };
    const registeredAgents = await shipped();
    assert.equal(registeredAgents.length, SHIPPED_AGENTS.length);
    for (const agent of registeredAgents) {
      const alias = agent.policy_tags?.mesh_alias as string;
      assert.equal(agent.endpoints[0]?.health_url, `${gatewayUrl}/rpc/${alias}/health`);
    }
    // Within one probe interval: by the end of the prober's first round after the registration, one
    // that probed them all (its diagnostics say when it ended and how many it probed). The wait's limit
    // is a safety net well past the interval, not the claim.
    await eventually(
      async () => {
        const diagnostics = (await (await fetch(`${registryUrl}/v1/admin/diagnostics`)).json()) as { health_prober: { last_round: { at: string; probed: number } | null } };
        const last = diagnostics.health_prober.last_round;
        return last && last.at > registered && last.probed >= SHIPPED_AGENTS.length ? true : undefined;
      },
      'a prober round after the registration',
      3 * PROBE_INTERVAL_MS,
      250,
    );
    const agents = await shipped();
    for (const agent of agents) {
      for (const endpoint of agent.endpoints) {
        assert.equal(endpoint.health.status, 'healthy', `${agent.display_name}: ${JSON.stringify(endpoint.health)}\n${output.slice(-2000)}`);
        assert.equal(endpoint.health.reason, null);
        assert.ok(endpoint.health.checked_at, 'a probe reading, with its time');
      }
    }
    // The readings are the prober's: the diagnostics count its round, and the gateway's agents ran to serve their cards.
    const gateway = (await (await fetch(`${gatewayUrl}/health`)).json()) as { agents: { alias: string; starts: number }[] };
    for (const info of SHIPPED_AGENTS) assert.ok((gateway.agents.find((a) => a.alias === info.alias)?.starts ?? 0) >= 1, info.alias);

    // An agent registered without a health URL is never probed, and says so.
    const bare = await fetch(`${registryUrl}/v1/agents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-idempotency-key': randomUUID() },
      body: JSON.stringify({
        display_name: 'No health URL',
        jurisdiction: 'GB',
        endpoints: [{ url: 'http://127.0.0.1:9/rpc', protocol: 'mesh-a2a-jsonrpc' }],
        capabilities: { protocols: ['mesh-a2a-jsonrpc'], skills: [] },
        trust: { certificates: [], signatures: [], attestations: [] },
        owner: { org_id: 'test-org', org_name: 'Test', operator: 'test@localhost' },
      }),
    });
    assert.equal(bare.status, 201, await bare.clone().text());
    const record = (await bare.json()) as Agent;
    assert.deepEqual(record.endpoints[0]?.health, { status: 'unknown', checked_at: null, latency_ms: null, reason: 'no_health_url' });
  });
});
