// `npm run soak` (issue 28, item 6): the whole service as `npm start` runs it (registry, console and
// gateway in one process, the shipped agents as its children) under a mixed, bounded load on loopback
// for `--minutes` (default 30; CI runs 2), watched from outside:
//
// - every answer's status (no 5xx may come back);
// - the registry's event stream, followed from the start (every event once, in order, none missing at
//   the end);
// - the process's resident memory, event-loop delay and open handles, read from its /metrics every
//   `--sample-seconds`, and compared between the first and the last third of the run after warm-up.
//
// It prints the samples and a verdict, writes them as JSON with `--json <file>`, and exits 1 when a
// check fails. With DATABASE_URL set it runs on PostgreSQL (in a schema of its own).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_MESH_JWT_SECRET } from '../src/core/config.ts';
import { freePort } from '../src/core/http/free-port.ts';
import { issueMeshToken } from '../src/mesh/runtime/auth.ts';
import { syntheticAgent } from '../bench/seed.ts';

const { values } = parseArgs({
  options: { minutes: { type: 'string', default: process.env.SOAK_MINUTES ?? '30' }, 'sample-seconds': { type: 'string' }, rate: { type: 'string', default: '40' }, json: { type: 'string' } },
});
const MINUTES = Number(values.minutes);
const DURATION_MS = MINUTES * 60_000;
const SAMPLE_MS = Number(values['sample-seconds'] ?? (MINUTES <= 5 ? 5 : 30)) * 1000;
const WARM_UP_MS = Math.min(60_000, DURATION_MS / 5);
/** Requests per second across all kinds: bounded, so this measures drift, not saturation. */
const RATE = Number(values.rate);
const root = new URL('..', import.meta.url).pathname;

/** What "flat" means (docs/performance.md, "Soak"): last third against first third, after warm-up. */
const LIMITS = { rssGrowth: 1.25, handlesGrowth: 25, delayP99Ms: 100 };

type Sample = { at_s: number; rss_mb: number; heap_mb: number; delay_p99_ms: number; handles: number; requests: number };

async function main(): Promise<number> {
  if (!(MINUTES > 0) || !(RATE > 0)) throw new Error('--minutes and --rate must be positive numbers');
  const dataDir = mkdtempSync(join(tmpdir(), 'ward-soak-'));
  const [registryPort, consolePort, gatewayPort] = [await freePort(), await freePort(), await freePort()];
  const env: Record<string, string> = {
    REGISTRY_PORT: String(registryPort),
    CONSOLE_PORT: String(consolePort),
    GATEWAY_PORT: String(gatewayPort),
    REGISTRY_DATA_DIR: dataDir,
    REGISTRY_LOG_LEVEL: 'warn',
    ...(process.env.DATABASE_URL ? { DATABASE_SCHEMA: `soak_${Date.now()}` } : {}),
  };
  const service = spawn(process.execPath, ['src/cli/ward.ts', 'start'], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  const registry = `http://127.0.0.1:${registryPort}`;
  const consoleUrl = `http://127.0.0.1:${consolePort}`;
  const gateway = `http://127.0.0.1:${gatewayPort}`;
  try {
    await waitFor(service, [`${registry}/readyz`, `${consoleUrl}/readyz`, `${gateway}/health`]);
    console.log(`soak: ${MINUTES} min at ${RATE} req/s against ${registry} (console ${consoleUrl}, gateway ${gateway}), ${process.env.DATABASE_URL ? 'PostgreSQL' : 'SQLite'}`);
    return await soak(registry, consoleUrl, gateway);
  } finally {
    service.kill('SIGTERM');
    await new Promise((resolve) => (service.exitCode !== null ? resolve(undefined) : service.once('exit', resolve)));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function soak(registry: string, consoleUrl: string, gateway: string): Promise<number> {
  const statuses = new Map<number, number>();
  const failures: string[] = [];
  const stream = followEvents(registry);
  const token = await issueMeshToken({ secret: process.env.MESH_JWT_SECRET ?? DEFAULT_MESH_JWT_SECRET, sub: 'did:web:localhost:agents:soak', ttlSeconds: 3600 });
  const agents: string[] = [];
  let requests = 0;

  const record = (what: string, status: number) => {
    requests += 1;
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
    if (status >= 500 && failures.length < 20) failures.push(`${what} → ${status}`);
  };
  const call = async (what: string, url: string, init?: RequestInit): Promise<Response | undefined> => {
    try {
      const response = await fetch(url, { ...init, signal: AbortSignal.timeout(15_000) });
      record(what, response.status);
      return response;
    } catch (error) {
      record(what, 599);
      if (failures.length < 20) failures.push(`${what} → ${(error as Error).message}`);
      return undefined;
    }
  };
  const json = (body: unknown, extra: Record<string, string> = {}) => ({ method: 'POST', headers: { 'content-type': 'application/json', ...extra }, body: JSON.stringify(body) });

  let n = 0;
  const kinds: Array<() => Promise<void>> = [
    async () => {
      const body = { ...syntheticAgent(100_000 + (n += 1)), display_name: `Soak agent ${n} ${Date.now()}` };
      const answer = await call('register', `${registry}/v1/agents`, json(body, { 'x-idempotency-key': crypto.randomUUID() }));
      const created = answer?.ok ? ((await answer.json()) as { agent_id: string }) : undefined;
      if (created) agents.push(created.agent_id);
      else await answer?.body?.cancel();
    },
    async () => drain(await call('discover', `${registry}/v1/discover?capability=triage.assess&limit=10`)),
    async () => drain(await call('discover-miss', `${registry}/v1/discover?capability=skill.${n % 50}&jurisdiction=GB`)),
    async () => drain(await call('route', `${registry}/v1/route`, json({ capability: 'triage.assess', protocol: 'mesh-a2a-jsonrpc' }))),
    async () => {
      const agent = agents[Math.floor(Math.random() * agents.length)];
      if (!agent) return;
      const id = agent.split('/').pop() as string;
      drain(await call('suspend', `${registry}/v1/agents/${id}/suspend`, json({ reason: 'soak check' }, { 'x-idempotency-key': crypto.randomUUID() })));
      drain(await call('reinstate', `${registry}/v1/agents/${id}/reinstate`, { method: 'POST', headers: { 'x-idempotency-key': crypto.randomUUID() } }));
    },
    async () => drain(await call('console', `${consoleUrl}/${['dashboard', 'agents', 'audit', 'diagnostics'][n % 4]}`)),
    async () => {
      const headers = { authorization: `Bearer ${token}`, 'x-agent-id': 'did:web:localhost:agents:soak' };
      const message = { kind: 'message', role: 'user', parts: [{ kind: 'text', text: JSON.stringify({ chief_complaint: 'headache', vital_signs: { heart_rate: 80 } }) }] };
      const sent = await call('mesh send', `${gateway}/rpc/triage`, json({ jsonrpc: '2.0', id: 1, method: 'tasks/send', params: { sender: 'did:web:localhost:agents:soak', recipient: 'did:web:localhost:agents:triage', message } }, headers));
      const task = sent?.ok ? ((await sent.json()) as { result?: { task_id?: string } }).result?.task_id : (await sent?.body?.cancel(), undefined);
      if (task) drain(await call('mesh get', `${gateway}/rpc/triage`, json({ jsonrpc: '2.0', id: 2, method: 'tasks/get', params: { task_id: task } }, headers)));
    },
  ];
  // Reads weigh more than writes, as in use: the list is drawn from with these weights.
  const weights = [2, 5, 2, 3, 1, 2, 2];
  const schedule = weights.flatMap((weight, kind) => Array<number>(weight).fill(kind));

  const samples: Sample[] = [];
  const started = Date.now();
  const sampler = setInterval(() => {
    void readMetrics(registry).then((metrics) => metrics && samples.push({ ...metrics, at_s: Math.round((Date.now() - started) / 1000), requests }));
  }, SAMPLE_MS);
  const inFlight = new Set<Promise<void>>();
  const gapMs = 1000 / RATE;
  for (let next = Date.now(); Date.now() - started < DURATION_MS; next += gapMs) {
    const wait = next - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    if (inFlight.size >= 32) await Promise.race(inFlight);
    const run = (kinds[schedule[Math.floor(Math.random() * schedule.length)] as number] as () => Promise<void>)().finally(() => inFlight.delete(run));
    inFlight.add(run);
  }
  await Promise.all(inFlight);
  // No extra sample at the end: the delay histogram restarts at every read, so one taken right after
  // the last would cover a few milliseconds and read 0.
  clearInterval(sampler);

  const events = await stream.finish(registry);
  return report({ samples, statuses, failures, events, requests, started });
}

/** The registry's event stream from its start: the sequence numbers seen, then checked against the latest. */
function followEvents(registry: string) {
  const seqs: number[] = [];
  const controller = new AbortController();
  let reconnects = 0;
  const reading = (async () => {
    // A stream the registry ends (`stream.dropped`) is reopened after the last event seen, as
    // EventSource would: what counts is that no event is lost across it.
    while (!controller.signal.aborted) {
      const after = seqs.at(-1) ?? 0;
      const response = await fetch(`${registry}/v1/events/stream?cursor=${after}`, { signal: controller.signal, headers: { accept: 'text/event-stream' } });
      const decoder = new TextDecoder();
      let buffer = '';
      for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = frame.split('\n').find((line) => line.startsWith('data: '));
          if (!data || !/^id: /m.test(frame)) continue;
          const seq = (JSON.parse(data.slice(6)) as { seq?: number }).seq;
          if (typeof seq === 'number') seqs.push(seq);
        }
      }
      reconnects += 1;
    }
  })().catch((error: unknown) => {
    if (!controller.signal.aborted) throw error;
  });
  return {
    /** Waits until the stream has caught up with the registry's latest event, then checks the sequence. */
    async finish(base: string): Promise<{ seen: number; latest: number; missing: number; duplicates: number; outOfOrder: number; reconnects: number }> {
      const latest = await latestSeq(base);
      const deadline = Date.now() + 30_000;
      while ((seqs.at(-1) ?? 0) < latest && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
      controller.abort();
      await reading;
      const unique = new Set(seqs);
      let outOfOrder = 0;
      for (let i = 1; i < seqs.length; i += 1) if ((seqs[i] as number) <= (seqs[i - 1] as number)) outOfOrder += 1;
      let missing = 0;
      for (let seq = 1; seq <= latest; seq += 1) if (!unique.has(seq)) missing += 1;
      return { seen: seqs.length, latest, missing, duplicates: seqs.length - unique.size, outOfOrder, reconnects };
    },
  };
}

async function latestSeq(registry: string): Promise<number> {
  return ((await (await fetch(`${registry}/v1/events?limit=1`)).json()) as { last_seq: number }).last_seq;
}

async function readMetrics(registry: string): Promise<Omit<Sample, 'at_s' | 'requests'> | undefined> {
  const text = await (await fetch(`${registry}/metrics`).catch(() => undefined))?.text();
  if (!text) return undefined;
  const metric = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
  return {
    rss_mb: round(metric('process_resident_memory_bytes') / 2 ** 20),
    heap_mb: round(metric('nodejs_heap_size_used_bytes') / 2 ** 20),
    delay_p99_ms: round(metric('nodejs_eventloop_lag_p99_seconds') * 1000),
    handles: metric('nodejs_active_handles_total'),
  };
}

function report(run: { samples: Sample[]; statuses: Map<number, number>; failures: string[]; events: Awaited<ReturnType<ReturnType<typeof followEvents>['finish']>>; requests: number; started: number }): number {
  const { samples, statuses, failures, events } = run;
  const settled = samples.filter((sample) => sample.at_s * 1000 >= WARM_UP_MS);
  const third = Math.max(1, Math.floor(settled.length / 3));
  const first = settled.slice(0, third);
  const last = settled.slice(-third);
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
  const of = (part: Sample[], field: keyof Sample) => median(part.map((sample) => sample[field]));
  const rssGrowth = of(last, 'rss_mb') / of(first, 'rss_mb');
  const handlesGrowth = of(last, 'handles') - of(first, 'handles');
  const delayLast = of(last, 'delay_p99_ms');
  const fivexx = [...statuses].filter(([status]) => status >= 500).reduce((sum, [, count]) => sum + count, 0);
  const checks: Array<[string, boolean]> = [
    [`no 5xx (${fivexx})`, fivexx === 0],
    [`every event once and in order (${events.seen} seen, latest ${events.latest}, ${events.missing} missing, ${events.duplicates} twice, ${events.outOfOrder} out of order, ${events.reconnects} reconnects)`, events.missing === 0 && events.duplicates === 0 && events.outOfOrder === 0 && events.latest > 0],
    [`resident memory flat (last third ${of(last, 'rss_mb')} MB / first third ${of(first, 'rss_mb')} MB = ×${round(rssGrowth)}, at most ×${LIMITS.rssGrowth})`, rssGrowth <= LIMITS.rssGrowth],
    [`open handles flat (${of(first, 'handles')} → ${of(last, 'handles')}, at most +${LIMITS.handlesGrowth})`, handlesGrowth <= LIMITS.handlesGrowth],
    [`event-loop delay p99 ${of(first, 'delay_p99_ms')} → ${delayLast} ms (at most ${LIMITS.delayP99Ms} ms)`, delayLast <= LIMITS.delayP99Ms],
  ];
  console.log('\n| at (s) | requests | RSS (MB) | heap (MB) | event-loop p99 (ms) | handles |\n|---|---|---|---|---|---|');
  for (const sample of samples) console.log(`| ${sample.at_s} | ${sample.requests} | ${sample.rss_mb} | ${sample.heap_mb} | ${sample.delay_p99_ms} | ${sample.handles} |`);
  console.log(`\n${run.requests} requests in ${Math.round((Date.now() - run.started) / 1000)} s; statuses ${JSON.stringify(Object.fromEntries(statuses))}`);
  for (const failure of failures) console.log(`  ${failure}`);
  for (const [what, ok] of checks) console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  const passed = checks.filter(([, ok]) => ok).length;
  console.log(`soak: ${passed} passed, ${checks.length - passed} failed`);
  if (values.json) void writeFile(values.json, JSON.stringify({ minutes: MINUTES, rate: RATE, samples, statuses: Object.fromEntries(statuses), events, checks }, null, 2));
  return passed === checks.length ? 0 : 1;
}

async function waitFor(child: ChildProcess, urls: string[]): Promise<void> {
  for (let tries = 0; ; tries += 1) {
    if (child.exitCode !== null) throw new Error(`ward start exited with ${child.exitCode}`);
    const answers = await Promise.all(urls.map((url) => fetch(url).then((response) => response.ok, () => false)));
    if (answers.every(Boolean)) return;
    if (tries > 600) throw new Error(`ward start did not become ready (${urls.join(', ')})`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function drain(response: Response | undefined): void {
  void response?.body?.cancel();
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}

process.exitCode = await main().catch((error: unknown) => {
  console.error(`soak: ${(error as Error).message}`);
  return 1;
});
