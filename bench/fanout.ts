// `npm run bench:fanout`: the change stream's fan-out. N subscribers follow GET /v1/events/stream on
// the real registry (a child process on SQLite, log level warn); a writer registers agents one at a
// time and each registration's `agent.registered` frame is timed from the start of the write to its
// arrival at every subscriber. The baseline is bare node:http (bench/fanout-bare.ts) answering a POST
// and writing a frame of the same size to the same number of open responses. Also: the writer's
// latency with no subscribers and with N (Ward's and the baseline's), events missed, and the
// registry's RSS growth over the run. Three processes: the writer (this one), the subscribers
// (bench/fanout-subscribers.ts) and the server, so no side's figures include another side's work on
// the same thread. Times cross processes as performance.timeOrigin + performance.now(): each process's
// origin is read from the wall clock at its start, so a clock step during a run would skew delivery. `--quick`: 50 subscribers, 20 events (CI keeps the bench from
// rotting; nothing is asserted about speed).
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { startChild, startQuietRegistry, stop } from './processes.ts';
import { syntheticAgent } from './seed.ts';

const QUICK = process.argv.includes('--quick');
const SUBSCRIBERS = (process.env.BENCH_SUBSCRIBERS ?? (QUICK ? '50' : '200,1000')).split(',').map(Number);
const EVENTS = Number(process.env.BENCH_EVENTS ?? (QUICK ? 20 : 200));
const GAP_MS = Number(process.env.BENCH_GAP_MS ?? 20);

type Timing = { p50: number; p99: number };
/** What a write answers: a registered agent (Ward), or the frame's id (the baseline). */
type WriteAnswer = { agent_id?: string; seq?: string };
/** The size of a Ward event frame as received, so the baseline writes frames of the same size. */
let wardFrameBytes = 0;
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};
const timing = (values: number[]): Timing => ({ p50: percentile(values, 50), p99: percentile(values, 99) });
/** Milliseconds since the epoch, monotonic within the process; comparable with the subscribers' process (see above). */
const epochNow = () => performance.timeOrigin + performance.now();

type Arrivals = Record<string, number[]>;

/** How long the subscribers' process may take to open every stream, or to report. */
const CHILD_TIMEOUT_MS = 60_000;

/**
 * Opens `count` stream readers on `url` in their own process; `stop()` closes them and answers what
 * arrived when; `kill()` ends the process whatever state it is in (call it in a `finally`).
 */
async function subscribe(url: string, count: number): Promise<{ stop(): Promise<Arrivals>; kill(): void }> {
  const child = spawn(process.execPath, ['bench/fanout-subscribers.ts', url, String(count)], {
    cwd: new URL('..', import.meta.url).pathname,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  // 'close', not 'exit': it comes after the last of the child's output has been read.
  const exited = new Promise<never>((_, reject) => child.once('close', (code, signal) => reject(new Error(`the subscribers exited (${code ?? signal})`))));
  exited.catch(() => {});
  child.stdin.on('error', () => {}); // a child that died is reported by `exited`, not by an EPIPE here
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async (what: string) => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the subscribers did not ${what} within ${CHILD_TIMEOUT_MS / 1000} s`)), CHILD_TIMEOUT_MS);
    });
    try {
      const line = await Promise.race([lines.next(), exited, timeout]);
      if (line.done) return await exited;
      return line.value;
    } finally {
      clearTimeout(timer);
    }
  };
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  try {
    if ((await next('open every stream')) !== 'ready') throw new Error('the subscribers did not start');
  } catch (error) {
    kill();
    throw error;
  }
  return {
    async stop() {
      child.stdin.write('stop\n');
      const report = JSON.parse(await next('report')) as { arrivals: Arrivals; frameBytes: number };
      wardFrameBytes ||= report.frameBytes;
      return report.arrivals;
    },
    kill,
  };
}

/** Each write's delays to every subscriber, and how many (write, subscriber) pairs saw no frame. */
function deliveries(starts: Map<string, number>, arrivals: Arrivals, subscribers: number): { delays: number[]; missed: number } {
  const delays: number[] = [];
  let missed = 0;
  for (const [id, started] of starts) {
    const got = arrivals[id] ?? [];
    missed += subscribers - got.length;
    for (const at of got) delays.push(at - started);
  }
  return { delays, missed };
}

/** The registry's V8 heap in use and its external memory (prom-client's default metrics), in MiB. */
async function heapMiB(url: string): Promise<{ used: number; external: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const value = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? NaN) / 2 ** 20;
  return { used: value('nodejs_heap_size_used_bytes'), external: value('nodejs_external_memory_bytes') };
}

const rssKiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);

/** Distinct agents for every write of a run (their names must not collide: a duplicate is refused). */
let agentNumber = 3_000_000;

/** Writes `EVENTS` registrations one at a time; answers the write latencies and each write's start, by event id. */
async function writeAll(url: string, starts: Map<string, number>, seqOf: (body: WriteAnswer) => Promise<string>, afterEach?: (index: number) => void): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < EVENTS; i += 1) {
    const started = epochNow();
    const response = await fetch(`${url}/v1/agents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-idempotency-key': randomUUID() },
      body: JSON.stringify(syntheticAgent((agentNumber += 1))),
    });
    // A refused write has no event to wait for: counted as missed by every subscriber, it would
    // read as lost events.
    if (response.status !== 201) throw new Error(`registration ${i} answered ${response.status}: ${await response.text()}`);
    latencies.push(epochNow() - started);
    starts.set(await seqOf((await response.json()) as WriteAnswer), started);
    afterEach?.(i);
    await new Promise((resolve) => setTimeout(resolve, GAP_MS));
  }
  return latencies;
}

async function ward(count: number) {
  const dir = mkdtempSync(join(tmpdir(), 'ward-fanout-'));
  const registry = await startQuietRegistry({
    DATABASE_URL: '',
    REGISTRY_DATA_DIR: dir,
    // V8 flags for the registry alone (e.g. --max-semi-space-size=4, to tell heap sizing from growth).
    ...(process.env.BENCH_REGISTRY_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_REGISTRY_NODE_OPTIONS } : {}),
  });
  let subscribers: Awaited<ReturnType<typeof subscribe>> | undefined;
  try {
    // The writer alone first, then with the subscribers.
    const alone = await writeAll(registry.url, new Map(), async () => '');
    subscribers = await subscribe(`${registry.url}/v1/events/stream?event_types=agent.registered`, count);
    const rssBefore = rssKiB(registry.child.pid as number);
    const heapBefore = await heapMiB(registry.url);
    const starts = new Map<string, number>();
    const history = async (body: WriteAnswer) => {
      const events = (await (await fetch(`${registry.url}/v1/events?subject=${encodeURIComponent(body.agent_id ?? '')}&event_types=agent.registered&limit=1`)).json()) as { events?: { seq: number }[] };
      return String(events.events?.[0]?.seq ?? '');
    };
    // RSS every tenth of the run: growth that levels off is the heap and buffers warming up; growth
    // that goes on to the end would be a leak.
    const rssSeries: number[] = [];
    const sampleEvery = Math.max(1, Math.floor(EVENTS / 10));
    const latencies = await writeAll(registry.url, starts, history, (index) => {
      if ((index + 1) % sampleEvery === 0) rssSeries.push(Math.round((rssKiB(registry.child.pid as number) - rssBefore) / 1024));
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const rssAfter = rssKiB(registry.child.pid as number);
    if (process.env.BENCH_RSS_SERIES) {
      const heapAfter = await heapMiB(registry.url);
      console.log(`RSS growth MiB every ${sampleEvery} events, ${count} subscribers: ${rssSeries.join(' ')}`);
      console.log(`V8 heap used ${heapBefore.used.toFixed(1)} → ${heapAfter.used.toFixed(1)} MiB, external ${heapBefore.external.toFixed(1)} → ${heapAfter.external.toFixed(1)} MiB`);
    }
    const { delays, missed } = deliveries(starts, await subscribers.stop(), count);
    return { delivery: timing(delays), writer: timing(latencies), writerAlone: timing(alone), missed, rssGrowthMiB: (rssAfter - rssBefore) / 1024 };
  } finally {
    subscribers?.kill();
    await stop(registry.child);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The same fan-out with nothing but node:http (bench/fanout-bare.ts): a POST writes one frame of `bytes` to every open response. */
async function bare(count: number, bytes: number) {
  const server = await startChild(['bench/fanout-bare.ts'], { FRAME_BYTES: String(bytes) });
  let subscribers: Awaited<ReturnType<typeof subscribe>> | undefined;
  try {
    const alone = await writeAll(server.url, new Map(), async () => '');
    subscribers = await subscribe(`${server.url}/stream`, count);
    const starts = new Map<string, number>();
    const latencies = await writeAll(server.url, starts, async (body) => body.seq ?? '');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const { delays } = deliveries(starts, await subscribers.stop(), count);
    return { delivery: timing(delays), writer: timing(latencies), writerAlone: timing(alone) };
  } finally {
    subscribers?.kill();
    await stop(server.child);
  }
}

console.log(`\nEvent fan-out: ${EVENTS} registrations ${GAP_MS} ms apart, SQLite, load average ${loadavg().map((n) => n.toFixed(2)).join(' ')}`);
console.log('| subscribers | Ward delivery p50 / p99 ms | bare delivery p50 / p99 ms | p99 ratio | Ward writer p50 / p99 ms alone → with subscribers | bare writer p50 / p99 ms alone → with subscribers | missed | registry RSS growth MiB |');
console.log('|---|---|---|---|---|---|---|---|');
const ms = (t: Timing) => `${t.p50.toFixed(1)} / ${t.p99.toFixed(1)}`;
for (const count of SUBSCRIBERS) {
  const w = await ward(count);
  const b = await bare(count, wardFrameBytes || 600);
  console.log(
    `| ${count} | ${ms(w.delivery)} | ${ms(b.delivery)} | ${(w.delivery.p99 / b.delivery.p99).toFixed(2)} | ${ms(w.writerAlone)} → ${ms(w.writer)} | ${ms(b.writerAlone)} → ${ms(b.writer)} | ${w.missed} | ${w.rssGrowthMiB.toFixed(1)} |`,
  );
}
