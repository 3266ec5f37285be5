// `npm run bench`: discovery and routing against the real registry (a child process on SQLite),
// beside bare Fastify serving a fixed JSON document of the same size, measured in the same run.
// Figures are ratios against that baseline; docs/performance.md records them.
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { loadConfig } from '../src/core/config.ts';
import { buildRegistry } from '../src/registry/app.ts';
import { startChild, stop } from './processes.ts';
import { seedAgents } from './seed.ts';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const SIZES = (process.env.BENCH_AGENTS ?? '10000,100000').split(',').map(Number);

type Figures = { rps: number; p50: number; p99: number; errors: number; non2xx: number };

async function load(url: string, options: { method?: 'GET' | 'POST'; body?: string } = {}): Promise<Figures> {
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: DURATION_S,
    method: options.method ?? 'GET',
    ...(options.body ? { body: options.body, headers: { 'content-type': 'application/json' } } : {}),
  });
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors, non2xx: result.non2xx };
}

function row(name: string, figures: Figures, baseline?: Figures): string {
  const ratio = baseline ? (figures.rps / baseline.rps).toFixed(2) : '1.00';
  return `| ${name} | ${Math.round(figures.rps)} | ${figures.p50} | ${figures.p99} | ${ratio} | ${figures.errors + figures.non2xx} |`;
}

async function scenario(agents: number): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'ward-bench-'));
  try {
    const env = { REGISTRY_DATA_DIR: dir, REGISTRY_LOG_LEVEL: 'silent', REGISTRY_HEALTH_PROBES: 'false' };
    const seeder = await buildRegistry({ config: loadConfig(env), logger: false });
    const seededAt = performance.now();
    await seedAgents(seeder.ward, agents);
    const seedSeconds = ((performance.now() - seededAt) / 1000).toFixed(1);
    await seeder.close();

    // The listening line is logged at info; request lines are not (warn), as for the bare baseline.
    const registry = await startChild(['src/cli/ward.ts', 'registry'], { ...env, REGISTRY_PORT: '0', REGISTRY_LOG_LEVEL: 'info' });
    const discoverUrl = `${registry.url}/v1/discover?capability=skill.s17&limit=20`;
    const sample = await (await fetch(discoverUrl)).text();
    const target = (JSON.parse(sample) as { results: Array<{ agent_id: string }> }).results[0]?.agent_id;
    const baseline = await startChild(['bench/bare-fastify.ts'], { BARE_BYTES: String(Buffer.byteLength(sample)) });
    // The same data served with the answer cache off: every request runs the query and signs.
    const uncached = await startChild(['src/cli/ward.ts', 'registry'], {
      ...env,
      REGISTRY_PORT: '0',
      REGISTRY_LOG_LEVEL: 'info',
      REGISTRY_DISCOVERY_CACHE_ENTRIES: '0',
    });
    try {
      const bare = await load(`${baseline.url}/doc`);
      const discovery = await load(discoverUrl);
      const filtered = await load(`${registry.url}/v1/discover?capability=skill.s42&jurisdiction=GB&require_features=stream_resume&limit=20`);
      const cold = await load(`${uncached.url}/v1/discover?capability=skill.s17&limit=20`);
      const routeTarget = await load(`${registry.url}/v1/route`, { method: 'POST', body: JSON.stringify({ target }) });
      const routeCapability = await load(`${registry.url}/v1/route`, { method: 'POST', body: JSON.stringify({ capability: 'skill.s17', protocol: 'mesh-a2a-jsonrpc' }) });
      return [
        `### ${agents.toLocaleString('en-GB')} agents (seeded in ${seedSeconds} s; discovery response ${Buffer.byteLength(sample)} bytes)`,
        '',
        '| scenario | req/s | p50 ms | p99 ms | ratio to bare | errors |',
        '|---|---|---|---|---|---|',
        row('bare Fastify, fixed JSON of the same size', bare),
        row('GET /v1/discover?capability (20 results)', discovery, bare),
        row('GET /v1/discover + jurisdiction + feature', filtered, bare),
        row('GET /v1/discover?capability, answer cache off', cold, bare),
        row('POST /v1/route {target}', routeTarget, bare),
        row('POST /v1/route {capability, protocol}', routeCapability, bare),
        '',
      ];
    } finally {
      await stop(registry.child);
      await stop(uncached.child);
      await stop(baseline.child);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const lines = [
  `Ward registry benchmark — ${new Date().toISOString()}, Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}`,
  `autocannon: ${CONNECTIONS} connections, ${DURATION_S} s per scenario; registry on SQLite, response signing on, request logging on (info) in the registry and off in the bare baseline.`,
  '',
];
for (const agents of SIZES) lines.push(...(await scenario(agents)));
console.log(lines.join('\n'));
