// `npm run bench:registration`: POST /v1/agents against the real registry (a child process) on SQLite
// and, when DATABASE_URL (or TEST_DATABASE_URL) is set, on PostgreSQL, beside bare Fastify answering
// 201 with a body of the same size. Rounds interleave Ward and the baseline; the figures are the
// median of the rounds. Request logging is off on both sides (log level warn). `--quick` runs seconds
// on small settings so CI keeps the bench from rotting; it asserts nothing about speed. `--json`
// prints the rows as JSON too; BENCH_BACKENDS=sqlite or =postgres measures one back-end.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { combine, dropSchema, type Figures } from './measure.ts';
import { startChild, startQuietRegistry, stop } from './processes.ts';
import { syntheticAgent } from './seed.ts';

const QUICK = process.argv.includes('--quick');
const JSON_OUT = process.argv.includes('--json');
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? (QUICK ? 2 : 8));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 3));
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const PG_URL = process.env.DATABASE_URL ?? process.env.TEST_DATABASE_URL;

type Row = { backend: string; ward: Figures; bare: Figures; ratio: number };

let counter = 0;

/** Registrations, each a new agent with its own idempotency key, from `CONNECTIONS` connections. */
async function register(url: string): Promise<Figures> {
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: DURATION_S,
    requests: [
      {
        method: 'POST',
        setupRequest: (request) => {
          counter += 1;
          return {
            ...request,
            headers: { 'content-type': 'application/json', 'x-idempotency-key': randomUUID() },
            body: JSON.stringify(syntheticAgent(1_000_000 + counter)),
          };
        },
      },
    ],
  });
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors, non2xx: result.non2xx };
}

async function scenario(backend: 'sqlite' | 'postgres'): Promise<Row> {
  const dir = mkdtempSync(join(tmpdir(), 'ward-bench-'));
  const schema = `bench_${Date.now().toString(36)}`;
  const env: Record<string, string> = {
    REGISTRY_DATA_DIR: dir,
    REGISTRY_HEALTH_PROBES: 'false',
    ...(backend === 'postgres' ? { DATABASE_URL: PG_URL as string, DATABASE_SCHEMA: schema } : { DATABASE_URL: '' }),
  };
  // At warn the registry logs no request lines, as the baseline logs none.
  const registry = await startQuietRegistry(env);
  try {
    const sample = await fetch(`${registry.url}/v1/agents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-idempotency-key': randomUUID() },
      body: JSON.stringify(syntheticAgent(999_999)),
    });
    if (sample.status !== 201) throw new Error(`registration answered ${sample.status}: ${await sample.text()}`);
    const bytes = Buffer.byteLength(await sample.text());
    const bare = await startChild(['bench/bare-fastify.ts'], { BARE_BYTES: String(bytes), BARE_STATUS: '201' });
    try {
      const ward: Figures[] = [];
      const baseline: Figures[] = [];
      for (let round = 0; round < ROUNDS; round += 1) {
        ward.push(await register(`${registry.url}/v1/agents`));
        baseline.push(await register(`${bare.url}/doc`));
      }
      const w = combine(ward);
      const b = combine(baseline);
      return { backend, ward: w, bare: b, ratio: w.rps / b.rps };
    } finally {
      await stop(bare.child);
    }
  } finally {
    await stop(registry.child);
    rmSync(dir, { recursive: true, force: true });
    if (backend === 'postgres') await dropSchema(PG_URL as string, schema);
  }
}

// BENCH_BACKENDS=postgres (or sqlite) measures one back-end only.
const backends = (PG_URL ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const)).filter((backend) =>
  (process.env.BENCH_BACKENDS ?? 'sqlite,postgres').split(',').includes(backend),
);
const rows: Row[] = [];
for (const backend of backends) rows.push(await scenario(backend));

console.log(`\nRegistration: ${CONNECTIONS} connections, ${DURATION_S} s × ${ROUNDS} interleaved rounds (median), load average ${loadavg().map((n) => n.toFixed(2)).join(' ')}`);
console.log('| backend | Ward req/s | p50 ms | p99 ms | bare 201 req/s | bare p99 ms | ratio | errors |');
console.log('|---|---|---|---|---|---|---|---|');
for (const row of rows) {
  console.log(`| ${row.backend} | ${Math.round(row.ward.rps)} | ${row.ward.p50} | ${row.ward.p99} | ${Math.round(row.bare.rps)} | ${row.bare.p99} | ${row.ratio.toFixed(3)} | ${row.ward.errors + row.ward.non2xx} |`);
}
if (JSON_OUT) console.log(JSON.stringify(rows));
