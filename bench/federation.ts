// `npm run bench:federation`: discovery across a real three-tier federation (`ward federation up`:
// three registry processes on SQLite) beside bare Fastify serving a JSON document of the same size,
// measured in the same run, and the chain verifier's throughput. docs/performance.md records them.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { verifyTrustBundle, type TrustAnchorInput } from '../src/client/trust/bundle-verifier.ts';
import { federationUp } from '../src/service/federation-up.ts';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const VERIFICATIONS = 2000;
const root = new URL('..', import.meta.url).pathname;

type Figures = { rps: number; p50: number; p99: number; errors: number };

async function load(url: string): Promise<Figures> {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: DURATION_S });
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors + result.non2xx };
}

function startBare(bytes: number): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bench/bare-fastify.ts'], { cwd: root, env: { ...process.env, BARE_BYTES: String(bytes) }, stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout?.once('data', (chunk: Buffer) => {
      const match = /listening on (http:\/\/\S+)/.exec(chunk.toString());
      if (match) resolve({ child, url: match[1] as string });
      else reject(new Error(`unexpected output: ${chunk}`));
    });
  });
}

const row = (name: string, figures: Figures, bare: Figures) =>
  `| ${name} | ${Math.round(figures.rps)} | ${figures.p50} | ${figures.p99} | ${(figures.rps / bare.rps).toFixed(3)} | ${figures.errors} |`;

const dir = mkdtempSync(join(tmpdir(), 'ward-bench-federation-'));
const federation = await federationUp({ dataDir: dir, basePort: 0 });
try {
  const [rootTier, sovereign, organisation] = federation.tiers;
  if (!rootTier || !sovereign || !organisation) throw new Error('the federation did not start');
  const local = `${rootTier.url}/v1/discover?capability=triage.assess`;
  const federated = `${local}&federated=true`;
  const sample = await (await fetch(federated)).text();
  const bare = await startBare(Buffer.byteLength(sample));
  try {
    const bareFigures = await load(`${bare.url}/doc`);
    const sovereignLocal = await load(`${sovereign.url}/v1/discover?capability=triage.assess`);
    const sovereignFederated = await load(`${sovereign.url}/v1/discover?capability=triage.assess&federated=true`);
    const rootFederated = await load(federated);

    const agent = federation.agents.organisation?.[0] as string;
    const bundle = await (await fetch(`${organisation.url}/v1/trust/bundle?subject=${encodeURIComponent(agent)}`)).json();
    const anchor = { jwks: (await (await fetch(`${rootTier.url}/.well-known/jwks.json`)).json()) as TrustAnchorInput['jwks'], registry_id: rootTier.registryId };
    const started = performance.now();
    for (let i = 0; i < VERIFICATIONS; i += 1) {
      if (!(await verifyTrustBundle(bundle, anchor)).valid) throw new Error('the bundle did not verify');
    }
    const perSecond = VERIFICATIONS / ((performance.now() - started) / 1000);

    console.log(
      [
        `Ward federation benchmark — ${new Date().toISOString()}, Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}`,
        `autocannon: ${CONNECTIONS} connections, ${DURATION_S} s per scenario; three registry processes (SQLite) and the load generator on one machine; answer ${Buffer.byteLength(sample)} bytes.`,
        '',
        '| scenario | req/s | p50 ms | p99 ms | ratio to bare | errors |',
        '|---|---|---|---|---|---|',
        row('bare Fastify, fixed JSON of the same size', bareFigures, bareFigures),
        row('sovereign: GET /v1/discover (local, cached)', sovereignLocal, bareFigures),
        row('sovereign: federated=true (asks the organisation)', sovereignFederated, bareFigures),
        row('root: federated=true (root → sovereign → organisation)', rootFederated, bareFigures),
        '',
        `Offline verification of an organisation agent's bundle (two statements + bundle, ES256): ${Math.round(perSecond)} per second in one thread.`,
      ].join('\n'),
    );
  } finally {
    bare.child.kill('SIGTERM');
  }
} finally {
  await federation.stop();
  rmSync(dir, { recursive: true, force: true });
}
