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
