// `npm run bench:phi`: the PHI guard's cost per request (issue 19: "measure its cost per request").
// Times `scanForPhi` over the bodies the registry sees most (a registration, a large update with 50
// endpoints and long descriptions) and over the query strings of discovery, in rounds, median of the
// rounds; the figure to compare is microseconds per scan against the request's total (the
// registration bench answers in ~1 ms of CPU per request). In-process: no HTTP, no other load.
import { scanForPhi, scanHeadersForPhi, scanQueryForPhi } from '../src/core/phi/index.ts';
import { syntheticAgent } from './seed.ts';

const QUICK = process.argv.includes('--quick');
const ROUNDS = QUICK ? 1 : 5;
const ITERATIONS = QUICK ? 200 : 5000;

const registration = syntheticAgent(42);
const large = {
  ...syntheticAgent(43),
  description: 'Triage assistant for chest pain and stroke pathways; FHIR R4 Observation, Condition and Encounter support. '.repeat(40),
  endpoints: Array.from({ length: 50 }, (_, i) => ({ url: `https://agents.example.org/a2a/v${i}`, protocol: 'mesh-a2a-jsonrpc', priority: i, weight: 100 })),
};
const query = { capability: 'triage.assess', jurisdiction: 'GB', protocol: 'mesh-a2a-jsonrpc', require_features: 'stream_resume', limit: '20' };
const headers = { 'x-request-id': 'req-2025-06-17-0001', 'user-agent': 'ward-client/1.0', traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' };

const cases: Array<[string, () => unknown]> = [
  ['registration body (scanForPhi)', () => scanForPhi(registration)],
  ['large update body: 50 endpoints, 4 kB description', () => scanForPhi(large)],
  ['discovery query (scanQueryForPhi)', () => scanQueryForPhi(query)],
  ['request headers (scanHeadersForPhi)', () => scanHeadersForPhi(headers)],
];

function time(run: () => unknown): number {
  const started = process.hrtime.bigint();
  for (let i = 0; i < ITERATIONS; i += 1) run();
  return Number(process.hrtime.bigint() - started) / 1000 / ITERATIONS;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

for (const [, run] of cases) time(run); // warm-up
const rows = cases.map(([name, run]) => {
  const rounds = Array.from({ length: ROUNDS }, () => time(run));
  return { name, bytes: name.includes('header') ? JSON.stringify(headers).length : JSON.stringify(name.includes('query') ? query : name.includes('large') ? large : registration).length, micros: median(rounds) };
});
console.log(`\nPHI guard cost, ${ITERATIONS} scans × ${ROUNDS} rounds (median)`);
console.log('| input | bytes | µs per scan |\n|---|---|---|');
for (const row of rows) console.log(`| ${row.name} | ${row.bytes} | ${row.micros.toFixed(1)} |`);

// --- The flood of issue 41, finding 4 -----------------------------------------------------------
// Eight ~900 KB bodies of clinician names and conditions, four at a time from one client, against a
// registry child process on SQLite, while another client asks `/health` every 50 ms: the time each
// flood request takes to its answer (413 now: more text than the guard reads; 422 before, after a
// full scan on the event loop) and `/health`'s latency meanwhile. Then the same with bodies just under
// REGISTRY_PHI_MAX_TEXT_CHARS, which are scanned in full (in the worker now). `--no-flood` skips it.
if (!process.argv.includes('--no-flood')) {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { randomUUID } = await import('node:crypto');
  const { startQuietRegistry, stop } = await import('./processes.ts');
  const NAMES = ['Dr Amelia Hart', 'Nurse Oliver Grant', 'Dr Priya Nair', 'Mr Tom Reed', 'Dr Hannah Cole'];
  const CONDITIONS = ['asthma', 'type 2 diabetes', 'heart failure', 'COPD', 'atrial fibrillation'];
  const floodBody = (chars: number) => {
    const notes: string[] = [];
    for (let i = 0, total = 0; total < chars; i += 1) {
      const note = `${NAMES[i % 5]} reviews ${CONDITIONS[(i * 3) % 5]} clinics on ward ${i % 40}.`;
      notes.push(note);
      total += note.length;
    }
    return JSON.stringify({ ...registration, display_name: 'Flood', policy_tags: { notes } });
  };
  const dir = mkdtempSync(join(tmpdir(), 'ward-bench-phi-'));
  const registry = await startQuietRegistry({ REGISTRY_DATA_DIR: dir, DATABASE_URL: '' });
  try {
    for (const [label, body] of [['~900 KB bodies', floodBody(850_000)], ['bodies just under the text cap', floodBody(250_000)]] as const) {
      const healthMs: number[] = [];
      let flooding = true;
      const prober = (async () => {
        while (flooding) {
          const started = performance.now();
          await fetch(`${registry.url}/health`).then((answer) => answer.arrayBuffer());
          healthMs.push(performance.now() - started);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      })();
      const floodMs: number[] = [];
      const statuses = new Map<number, number>();
      let next = 0;
      const worker = async () => {
        while (next < 8) {
          next += 1;
          const started = performance.now();
          const answer = await fetch(`${registry.url}/v1/agents`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-idempotency-key': randomUUID() }, body });
          await answer.arrayBuffer();
          floodMs.push(performance.now() - started);
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        }
      };
      await Promise.all([worker(), worker(), worker(), worker()]);
      flooding = false;
      await prober;
      const max = (values: number[]) => Math.max(...values);
      console.log(`\nFlood: 8 × ${label} (${(Buffer.byteLength(body) / 1024).toFixed(0)} KiB), 4 at a time; /health every 50 ms from another client`);
      console.log('| figure | value |\n|---|---|');
      console.log(`| flood answers | ${[...statuses].map(([status, n]) => `${n} × ${status}`).join(', ')} |`);
      console.log(`| flood request, median / max (ms) | ${median(floodMs).toFixed(0)} / ${max(floodMs).toFixed(0)} |`);
      console.log(`| /health during the flood, median / max (ms) | ${median(healthMs).toFixed(1)} / ${max(healthMs).toFixed(1)} (${healthMs.length} probes) |`);
    }
  } finally {
    await stop(registry.child);
    rmSync(dir, { recursive: true, force: true });
  }
}
