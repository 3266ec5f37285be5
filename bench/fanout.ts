// `npm run bench:fanout`: the change stream's fan-out. N subscribers follow GET /v1/events/stream on
// the real registry (a child process on SQLite, log level warn); a writer registers agents one at a
// time and each registration's `agent.registered` frame is timed from the start of the write to its
// arrival at every subscriber. The baseline is bare node:http answering a POST and writing a frame of
// the same size to the same number of open responses. Also: the writer's latency with no subscribers
// and with N, events missed, and the registry's RSS growth over the run. `--quick`: 50 subscribers,
// 20 events (CI keeps the bench from rotting; nothing is asserted about speed).
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, get, type IncomingMessage, type ServerResponse } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startQuietRegistry, stop } from './processes.ts';
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

/** Opens `count` stream readers; `arrivals` gets, per event id, each arrival time. */
async function subscribe(url: string, count: number, arrivals: Map<string, number[]>): Promise<IncomingMessage[]> {
  const responses: IncomingMessage[] = [];
  for (let i = 0; i < count; i += 1) {
    responses.push(
      await new Promise<IncomingMessage>((resolve, reject) => {
        const request = get(url, { agent: false, headers: { accept: 'text/event-stream' } }, (response) => {
          let buffer = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => {
            const now = performance.now();
            buffer += chunk;
            let end;
            while ((end = buffer.indexOf('\n\n')) >= 0) {
              const frame = buffer.slice(0, end);
              buffer = buffer.slice(end + 2);
              const id = /^id: (\S+)$/m.exec(frame)?.[1];
              if (id && /^event: agent\.registered$/m.test(frame)) wardFrameBytes ||= Buffer.byteLength(frame) + 2;
              if (id) {
                const list = arrivals.get(id) ?? [];
                list.push(now);
                arrivals.set(id, list);
              }
            }
          });
          resolve(response);
        });
        request.on('error', reject);
      }),
    );
  }
  return responses;
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
    const started = performance.now();
    const response = await fetch(`${url}/v1/agents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-idempotency-key': randomUUID() },
      body: JSON.stringify(syntheticAgent((agentNumber += 1))),
    });
    // A refused write has no event to wait for: counted as missed by every subscriber, it would
    // read as lost events.
    if (response.status !== 201) throw new Error(`registration ${i} answered ${response.status}: ${await response.text()}`);
    latencies.push(performance.now() - started);
    starts.set(await seqOf((await response.json()) as WriteAnswer), started);
    afterEach?.(i);
    await new Promise((resolve) => setTimeout(resolve, GAP_MS));
  }
  return latencies;
}

async function ward(subscribers: number) {
  const dir = mkdtempSync(join(tmpdir(), 'ward-fanout-'));
  const registry = await startQuietRegistry({
    DATABASE_URL: '',
    REGISTRY_DATA_DIR: dir,
    // V8 flags for the registry alone (e.g. --max-semi-space-size=4, to tell heap sizing from growth).
    ...(process.env.BENCH_REGISTRY_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_REGISTRY_NODE_OPTIONS } : {}),
  });
  try {
    // The writer alone first, then with the subscribers.
    const alone = await writeAll(registry.url, new Map(), async () => '');
    const arrivals = new Map<string, number[]>();
    const responses = await subscribe(`${registry.url}/v1/events/stream?event_types=agent.registered`, subscribers, arrivals);
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
      console.log(`RSS growth MiB every ${sampleEvery} events, ${subscribers} subscribers: ${rssSeries.join(' ')}`);
      console.log(`V8 heap used ${heapBefore.used.toFixed(1)} → ${heapAfter.used.toFixed(1)} MiB, external ${heapBefore.external.toFixed(1)} → ${heapAfter.external.toFixed(1)} MiB`);
    }
    for (const response of responses) response.destroy();
    const delays: number[] = [];
    let missed = 0;
    for (const [id, started] of starts) {
      const got = arrivals.get(id) ?? [];
      missed += subscribers - got.length;
      for (const at of got) delays.push(at - started);
    }
    return { delivery: timing(delays), writer: timing(latencies), writerAlone: timing(alone), missed, rssGrowthMiB: (rssAfter - rssBefore) / 1024 };
  } finally {
    await stop(registry.child);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The same fan-out with nothing but node:http: a POST writes one frame of `bytes` to every open response. */
async function bare(subscribers: number, bytes: number) {
  const open = new Set<ServerResponse>();
  let seq = 0;
  const server = createServer((request, response) => {
    if (request.method === 'GET') {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.flushHeaders();
      open.add(response);
      response.on('close', () => open.delete(response));
      return;
    }
    request.resume();
    request.on('end', () => {
      seq += 1;
      const head = `id: ${seq}\nevent: agent.registered\ndata: `;
      const frame = `${head}${'x'.repeat(Math.max(0, bytes - head.length - 2))}\n\n`;
      for (const subscriber of open) subscriber.write(frame);
      response.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ seq: String(seq) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const arrivals = new Map<string, number[]>();
  const responses = await subscribe(`${url}/stream`, subscribers, arrivals);
  const starts = new Map<string, number>();
  const latencies = await writeAll(url, starts, async (body) => body.seq ?? '');
  await new Promise((resolve) => setTimeout(resolve, 300));
  for (const response of responses) response.destroy();
  server.closeAllConnections();
  server.close();
  const delays: number[] = [];
  for (const [id, started] of starts) for (const at of arrivals.get(id) ?? []) delays.push(at - started);
  return { delivery: timing(delays), writer: timing(latencies) };
}

console.log(`\nEvent fan-out: ${EVENTS} registrations ${GAP_MS} ms apart, SQLite, load average ${loadavg().map((n) => n.toFixed(2)).join(' ')}`);
console.log('| subscribers | Ward delivery p50 / p99 ms | bare delivery p50 / p99 ms | p99 ratio | writer p50 / p99 ms alone → with subscribers | missed | registry RSS growth MiB |');
console.log('|---|---|---|---|---|---|---|');
for (const count of SUBSCRIBERS) {
  const w = await ward(count);
  const b = await bare(count, wardFrameBytes || 600);
  console.log(
    `| ${count} | ${w.delivery.p50.toFixed(1)} / ${w.delivery.p99.toFixed(1)} | ${b.delivery.p50.toFixed(1)} / ${b.delivery.p99.toFixed(1)} | ${(w.delivery.p99 / b.delivery.p99).toFixed(2)} | ${w.writerAlone.p50.toFixed(1)} / ${w.writerAlone.p99.toFixed(1)} → ${w.writer.p50.toFixed(1)} / ${w.writer.p99.toFixed(1)} | ${w.missed} | ${w.rssGrowthMiB.toFixed(1)} |`,
  );
}
