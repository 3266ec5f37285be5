/**
 * Console benchmark: how long a console page takes to answer, against the registry's own response
 * time for the data the page shows (the same registry calls, made directly with the same client, in
 * parallel as the page makes them). The difference is the console's cost: its HTTP hop, rendering
 * and verification. SQLite, 200 agents, one client at a time (a person opening a page, not a load
 * test); scenarios interleaved, median of the rounds' medians.
 *
 *   npm run bench:console [-- --requests 40 --rounds 5]
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createRegistryClient, type RegistryClient } from '../src/client/registry-client.ts';
import { collectAlerts } from '../src/console/alerts/alert-rules.ts';
import { loadConfig } from '../src/core/config.ts';
import { loadMeshConfig } from '../src/mesh/mesh-config.ts';
import { startService } from '../src/service/start-service.ts';

const { values } = parseArgs({ options: { requests: { type: 'string', default: '40' }, rounds: { type: 'string', default: '5' }, agents: { type: 'string', default: '200' } } });
const REQUESTS = Number(values.requests);
const ROUNDS = Number(values.rounds);

const data = mkdtempSync(join(tmpdir(), 'ward-bench-console-'));
const env = { REGISTRY_DATA_DIR: data, REGISTRY_PORT: '0', GATEWAY_PORT: '0', CONSOLE_PORT: '0', REGISTRY_LOG_LEVEL: 'warn', REGISTRY_HEALTH_PROBES: 'false' };
const service = await startService(loadConfig(env), loadMeshConfig(env), env);
try {
  const api = createRegistryClient({ baseUrl: service.registry.ward.baseUrl() });
  let sample = '';
  for (let index = 0; index < Number(values.agents); index += 1) {
    const answer = await api.registerAgent(
      {
        display_name: `Bench agent ${index}`,
        jurisdiction: 'GB',
        endpoints: [{ url: `https://agents.example.org/${index}`, protocol: 'mesh-a2a-jsonrpc' }],
        capabilities: { skills: ['triage.assess'] },
        trust: {},
        owner: { org_id: `org-${index % 10}` },
      },
      { idempotencyKey: randomUUID() },
    );
    if (!answer.ok) throw new Error(answer.text);
    sample = answer.body.agent_id;
  }
  const ulid = sample.slice(sample.lastIndexOf('/') + 1);

  type Scenario = { page: string; path: string; registry: (client: RegistryClient) => Promise<unknown> };
  const scenarios: Scenario[] = [
    { page: 'dashboard', path: '/dashboard', registry: (c) => Promise.all([c.overview(), c.events({ limit: 10 }), collectAlerts(c)]) },
    { page: 'agents (25 of 203)', path: '/agents', registry: (c) => c.listAgents({ limit: 25 }) },
    { page: 'one agent', path: `/agents/${ulid}`, registry: async (c) => (await c.getAgent(ulid), await c.events({ subject: sample, limit: 20 })) },
    { page: 'alerts', path: '/alerts', registry: (c) => collectAlerts(c) },
    { page: 'settings', path: '/settings', registry: (c) => Promise.all([c.diagnostics(), c.listApiKeys({ limit: 25 }), c.tiers()]) },
  ];

  const timeOf = async (run: () => Promise<unknown>) => {
    const times: number[] = [];
    for (let i = 0; i < REQUESTS; i += 1) {
      const start = performance.now();
      await run();
      times.push(performance.now() - start);
    }
    return median(times);
  };
  const pageTimes = new Map<string, number[]>();
  const registryTimes = new Map<string, number[]>();
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const scenario of scenarios) {
      const page = await timeOf(async () => {
        const response = await fetch(new URL(scenario.path, service.console.url));
        if (response.status !== 200) throw new Error(`${scenario.path}: ${response.status}`);
        await response.text();
      });
      const registry = await timeOf(() => scenario.registry(api));
      pageTimes.set(scenario.page, [...(pageTimes.get(scenario.page) ?? []), page]);
      registryTimes.set(scenario.page, [...(registryTimes.get(scenario.page) ?? []), registry]);
    }
  }
  console.log(`\nConsole pages against the registry calls behind them (${REQUESTS} requests x ${ROUNDS} rounds, median, ms)\n`);
  console.log('| page | registry calls | console page | ratio |');
  console.log('|---|---|---|---|');
  for (const scenario of scenarios) {
    const page = median(pageTimes.get(scenario.page) ?? []);
    const registry = median(registryTimes.get(scenario.page) ?? []);
    console.log(`| ${scenario.page} | ${registry.toFixed(2)} | ${page.toFixed(2)} | ${(page / registry).toFixed(2)} |`);
  }
} finally {
  await service.close();
  rmSync(data, { recursive: true, force: true });
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}
