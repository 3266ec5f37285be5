/**
 * `npm run bench:mesh`: the mesh's task round trip (send a message, then get the task it created),
 * each row an interleaved comparison of like with like (docs/performance.md, ## Mesh):
 *
 *   a. the Ward echo agent direct (bench/echo-agent.ts on the shipped runtime) against the
 *      `@a2a-js/sdk` echo server (bench/a2a-echo-server.ts): the same executor work, the same A2A 1.0
 *      requests (`SendMessage` with `returnImmediately`, then `GetTask`);
 *   b. the Ward gateway → that echo agent against the same agent direct: what the gateway costs;
 *   c. for context, the shipped triage agent through the gateway against it direct (`tasks/send` of a
 *      complete triage input, then `tasks/get`).
 *
 * Every process is a child of this one: the gateway (`ward gateway` with bench/mesh-manifest.json,
 * which starts the agents as its children as in production) and the SDK server. autocannon here, each
 * connection looping send → get with the id from its own send; a JSON-RPC error counts as a failure.
 * Rounds alternate which side goes first; figures are medians, a ratio the median of the per-round
 * ratios. Request logging is off on both sides by default (Ward at `warn`, the SDK server silent);
 * `--log-level info` logs requests on both sides as in production, each process to its own file.
 *
 *   npx node bench/mesh.ts [--quick] [--json FILE] [--duration 10] [--rounds 3] [--connections 16]
 *                          [--warmup 3] [--log-level warn|info] [--profile-gateway DIR]
 *
 * `--quick` runs seconds (CI keeps the bench from rotting; nothing is asserted about speed).
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { DEFAULT_MESH_JWT_SECRET } from '../src/core/config.ts';
import { freePort } from '../src/core/http/free-port.ts';
import { issueMeshToken } from '../src/mesh/runtime/auth.ts';
import { interleaved, median, type Figures } from './measure.ts';
import { startLoggingChild, stop } from './processes.ts';

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    json: { type: 'string' },
    duration: { type: 'string' },
    rounds: { type: 'string' },
    connections: { type: 'string', default: '16' },
    warmup: { type: 'string' },
    'log-level': { type: 'string', default: 'warn' },
    'profile-gateway': { type: 'string' },
  },
});
const QUICK = flags.quick;
const DURATION_S = Number(flags.duration ?? (QUICK ? 1 : 10));
const ROUNDS = Number(flags.rounds ?? (QUICK ? 1 : 3));
const WARMUP_S = Number(flags.warmup ?? (QUICK ? 0 : 3));
const CONNECTIONS = Number(flags.connections);
const LOG_LEVEL = flags['log-level'];
if (LOG_LEVEL !== 'warn' && LOG_LEVEL !== 'info')
  throw new Error('--log-level is warn (no request lines) or info (as in production)');
const LOGGING =
  LOG_LEVEL === 'info'
    ? 'request logging at info on both sides (as in production)'
    : 'request logging off on both sides (Ward at warn, the SDK server silent)';
const CALLER = 'did:web:localhost:agents:bench';
const ECHO_TEXT = 'Please echo this sentence back.';

/** One side of a comparison: where it is and how a connection's send → get loop is spelt. */
type Scenario = {
  name: string;
  url: string;
  headers: Record<string, string>;
  sendBody: () => string;
  getBody: (taskId: string) => string;
  /** The task id from a send's answer; undefined when the answer is an error. */
  taskIdOf: (body: string) => string | undefined;
  /** Whether a get's answer shows the task finished (so the round trip carried the echo). */
  completed: (body: string) => boolean;
  /** The server processes doing the work, by name, whose CPU time is counted. */
  processes: Record<string, number>;
};

/** A round's figures; `rps` counts round trips (send + get) per second. */
type RoundTrip = Figures & {
  rpcErrors: number;
  completedGets: number;
  gets: number;
  cpuUsPerRoundTrip: Record<string, number>;
};

/** CPU seconds a process has used (user + system), from /proc; undefined where there is none. */
function cpuSeconds(pid: number): number | undefined {
  if (pid === process.pid) {
    const usage = process.cpuUsage();
    return (usage.user + usage.system) / 1e6;
  }
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    // utime and stime, fields 14 and 15 of stat(5), in clock ticks (USER_HZ, 100 on Linux).
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

type Row = {
  row: 'a' | 'b' | 'c';
  label: string;
  subject: string;
  baseline: string;
  ratio: number;
  subjectFigures: SideFigures;
  baselineFigures: SideFigures;
  ratios: number[];
};

/** A side's medians, its errors, the share of gets that saw the echo, and CPU µs per round trip by process (median). */
type SideFigures = Figures & {
  rpcErrors: number;
  completedShare: number;
  cpuUsPerRoundTrip: Record<string, number>;
};

type LoopContext = { taskId?: string };

const parse = (body: string): Record<string, unknown> | undefined => {
  try {
    return JSON.parse(body) as Record<string, unknown>;
  } catch {
    return undefined;
  }
};

/** One autocannon run: every connection loops send → get of its own task. */
async function runRoundTrips(scenario: Scenario, durationS: number): Promise<RoundTrip> {
  let rpcErrors = 0;
  let completedGets = 0;
  let gets = 0;
  const counted = { ...scenario.processes, 'load generator': process.pid };
  const cpuBefore = Object.entries(counted).map(([name, pid]) => [name, pid, cpuSeconds(pid)] as const);
  const result = await autocannon({
    url: scenario.url,
    connections: CONNECTIONS,
    duration: durationS,
    headers: { 'content-type': 'application/json', ...scenario.headers },
    requests: [
      {
        method: 'POST',
        setupRequest: (request) => ({ ...request, body: scenario.sendBody() }),
        onResponse: (_status, body, context) => {
          const taskId = scenario.taskIdOf(body);
          if (taskId === undefined) rpcErrors += 1;
          (context as LoopContext).taskId = taskId ?? 'missing';
        },
      },
      {
        method: 'POST',
        setupRequest: (request, context) => ({
          ...request,
          body: scenario.getBody((context as LoopContext).taskId ?? 'missing'),
        }),
        onResponse: (_status, body) => {
          gets += 1;
          const answer = parse(body);
          if (!answer || 'error' in answer) rpcErrors += 1;
          else if (scenario.completed(body)) completedGets += 1;
        },
      },
    ],
  });
  const roundTrips = Math.max(1, result.requests.total / 2);
  const cpuUsPerRoundTrip: Record<string, number> = {};
  for (const [name, pid, before] of cpuBefore) {
    const after = cpuSeconds(pid);
    if (before !== undefined && after !== undefined)
      cpuUsPerRoundTrip[name] = Math.round(((after - before) * 1e6) / roundTrips);
  }
  return {
    rps: result.requests.total / 2 / durationS,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
    rpcErrors,
    completedGets,
    gets,
    cpuUsPerRoundTrip,
  };
}

/** The A2A 1.0 round trip, identical bytes for Ward and the SDK (Ward's requests also carry its credentials). */
function a2aEchoScenario(
  name: string,
  url: string,
  credentials: Record<string, string>,
  processes: Record<string, number>,
): Scenario {
  return {
    name,
    url,
    processes,
    headers: { 'a2a-version': '1.0', ...credentials },
    sendBody: () =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: {
          message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: ECHO_TEXT }] },
          configuration: { returnImmediately: true },
        },
      }),
    getBody: (taskId) => JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'GetTask', params: { id: taskId } }),
    taskIdOf: (body) =>
      (parse(body) as { result?: { task?: { id?: string } } } | undefined)?.result?.task?.id,
    completed: (body) => body.includes('TASK_STATE_COMPLETED') && body.includes(ECHO_TEXT),
  };
}

const TRIAGE_INPUT = {
  chief_complaint: 'chest pain',
  vital_signs: {
    respiratory_rate: 18,
    oxygen_saturation: 97,
    systolic_bp: 128,
    heart_rate: 88,
    consciousness: 'alert',
    temperature_c: 36.9,
  },
};

/** The contract's round trip with the triage agent: a complete input, so it completes on its first turn. */
function triageScenario(
  name: string,
  url: string,
  credentials: Record<string, string>,
  processes: Record<string, number>,
): Scenario {
  return {
    name,
    url,
    processes,
    headers: credentials,
    sendBody: () =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tasks/send',
        params: { message: { kind: 'message', role: 'user', parts: [{ kind: 'data', data: TRIAGE_INPUT }] } },
      }),
    getBody: (taskId) =>
      JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tasks/get', params: { task_id: taskId } }),
    taskIdOf: (body) => (parse(body) as { result?: { task_id?: string } } | undefined)?.result?.task_id,
    completed: (body) => body.includes('"state":"completed"'),
  };
}

/** Warms both sides, then measures them in alternating order; one row of the table. */
async function compare(row: Row['row'], label: string, subject: Scenario, baseline: Scenario): Promise<Row> {
  if (WARMUP_S > 0) {
    await runRoundTrips(subject, WARMUP_S);
    await runRoundTrips(baseline, WARMUP_S);
  }
  const extra = new Map<Scenario, RoundTrip[]>([
    [subject, []],
    [baseline, []],
  ]);
  const ratios: number[] = [];
  const measured = (scenario: Scenario) => async () => {
    const result = await runRoundTrips(scenario, DURATION_S);
    extra.get(scenario)?.push(result);
    console.log(
      `  ${row} ${scenario.name}: ${Math.round(result.rps)} round trips/s, p50 ${result.p50} ms, p99 ${result.p99} ms, errors ${result.errors + result.non2xx + result.rpcErrors}; CPU µs per round trip: ${cpuText(result.cpuUsPerRoundTrip)}`,
    );
    return result;
  };
  const result = await interleaved(ROUNDS, measured(subject), measured(baseline));
  const subjectRuns = extra.get(subject) ?? [];
  const baselineRuns = extra.get(baseline) ?? [];
  for (const [i, run] of subjectRuns.entries()) ratios.push(run.rps / (baselineRuns[i]?.rps ?? Number.NaN));
  const withCounts = (figures: Figures, runs: RoundTrip[]): SideFigures => ({
    ...figures,
    rps: Math.round(figures.rps),
    rpcErrors: runs.reduce((sum, r) => sum + r.rpcErrors, 0),
    completedShare:
      runs.reduce((sum, r) => sum + r.completedGets, 0) /
      Math.max(
        1,
        runs.reduce((sum, r) => sum + r.gets, 0),
      ),
    cpuUsPerRoundTrip: Object.fromEntries(
      Object.keys(runs[0]?.cpuUsPerRoundTrip ?? {}).map((name) => [
        name,
        median(runs.map((r) => r.cpuUsPerRoundTrip[name] ?? Number.NaN)),
      ]),
    ),
  });
  return {
    row,
    label,
    subject: subject.name,
    baseline: baseline.name,
    ratio: Number(result.ratio.toFixed(3)),
    subjectFigures: withCounts(result.ward, subjectRuns),
    baselineFigures: withCounts(result.bare, baselineRuns),
    ratios: ratios.map((r) => Number(r.toFixed(3))),
  };
}

const ROOT = fileURLToPath(new URL('../', import.meta.url));

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'ward-bench-mesh-'));
  const secret = process.env.MESH_JWT_SECRET || DEFAULT_MESH_JWT_SECRET;
  const profile = flags['profile-gateway'];
  const children: ChildProcess[] = [];
  try {
    const gatewayUrl = `http://127.0.0.1:${await freePort()}`;
    const gateway = await startLoggingChild(
      [...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : []), 'src/cli/ward.ts', 'gateway'],
      {
        MESH_DATA_DIR: dataDir,
        MESH_MANIFEST: join(ROOT, 'bench/mesh-manifest.json'),
        GATEWAY_PORT: new URL(gatewayUrl).port,
        GATEWAY_IDLE_TIMEOUT_MS: '0',
        MESH_LOG_LEVEL: LOG_LEVEL,
        MESH_JWT_SECRET: secret,
      },
      `${gatewayUrl}/livez`,
      join(dataDir, 'gateway.log'),
    );
    children.push(gateway);
    const sdkUrl = `http://127.0.0.1:${await freePort()}/`;
    const sdk = await startLoggingChild(
      ['bench/a2a-echo-server.ts'],
      { BENCH_LOG_LEVEL: LOG_LEVEL, BENCH_PORT: new URL(sdkUrl).port },
      sdkUrl,
      join(dataDir, 'a2a-echo-server.log'),
    );
    children.push(sdk);
    const loadAtStart = loadavg();
    const token = await issueMeshToken({ secret, sub: CALLER, ttlSeconds: 3600 });
    const credentials = { authorization: `Bearer ${token}`, 'x-agent-id': CALLER };
    // A first call starts each agent (triage with consent); the gateway's health then says where each listens.
    for (const alias of ['echo', 'triage']) {
      const started = await fetch(`${gatewayUrl}/rpc/${alias}`, {
        method: 'POST',
        headers: credentials,
        body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'tasks/get', params: { task_id: 'warm-up' } }),
      });
      if (!started.ok) throw new Error(`the gateway did not start ${alias}: HTTP ${started.status}`);
    }
    const health = (await (await fetch(`${gatewayUrl}/health`, { headers: credentials })).json()) as {
      agents: { alias: string; port: number | null; pid: number | null }[];
    };
    const agent = (alias: string) => {
      const found = health.agents.find((one) => one.alias === alias);
      if (!found?.port || !found.pid)
        throw new Error(`the gateway's health shows no port or pid for ${alias}`);
      return { url: `http://127.0.0.1:${found.port}/`, pid: found.pid };
    };
    const echo = agent('echo');
    const triage = agent('triage');
    const gatewayPid = gateway.pid ?? 0;
    const echoDirect = a2aEchoScenario('Ward echo agent direct', echo.url, credentials, {
      'echo agent': echo.pid,
    });
    console.log(
      `Ward mesh benchmark — ${new Date().toISOString()}, Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}`,
    );
    console.log(
      `autocannon: ${CONNECTIONS} connections, ${DURATION_S} s × ${ROUNDS} interleaved rounds (median), warm-up ${WARMUP_S} s; ${LOGGING}.`,
    );
    const rows = [
      await compare(
        'a',
        'Ward echo agent direct vs @a2a-js/sdk echo server',
        echoDirect,
        a2aEchoScenario('@a2a-js/sdk echo server', sdkUrl, {}, { 'SDK server': sdk.pid ?? 0 }),
      ),
      await compare(
        'b',
        'Ward gateway → echo agent vs the same agent direct',
        a2aEchoScenario('Ward gateway → echo agent', `${gatewayUrl}/rpc/echo/`, credentials, {
          gateway: gatewayPid,
          'echo agent': echo.pid,
        }),
        echoDirect,
      ),
      await compare(
        'c',
        'context: Ward gateway → triage agent vs the same agent direct',
        triageScenario('Ward gateway → triage agent', `${gatewayUrl}/rpc/triage/`, credentials, {
          gateway: gatewayPid,
          'triage agent': triage.pid,
        }),
        triageScenario('Ward triage agent direct', triage.url, credentials, { 'triage agent': triage.pid }),
      ),
    ];
    const loadAtEnd = loadavg();
    const load = (values: number[]) => values.map((l) => l.toFixed(2)).join(' ');
    console.log(
      [
        '',
        `Load average at start ${load(loadAtStart)}, at end ${load(loadAtEnd)}.`,
        '',
        '| row | compared | round trips/s | p50 / p99 ms | against | round trips/s | p50 / p99 ms | ratio (rounds) | errors |',
        '|---|---|---|---|---|---|---|---|---|',
        ...rows.map(
          ({ row, label, subject, baseline, subjectFigures: s, baselineFigures: b, ratio, ratios }) =>
            `| ${row}${label.startsWith('context') ? ' (context)' : ''} | ${subject} | ${s.rps} | ${s.p50} / ${s.p99} | ${baseline} | ${b.rps} | ${b.p50} / ${b.p99} | **${ratio.toFixed(2)}** (${ratios.map((r) => r.toFixed(2)).join(', ')}) | ${s.errors + s.non2xx + s.rpcErrors + b.errors + b.non2xx + b.rpcErrors} |`,
        ),
        '',
        `Gets that found the task completed with its echo: ${rows.map((r) => `${r.row} ${pct(r.subjectFigures.completedShare)} / ${pct(r.baselineFigures.completedShare)}`).join('; ')}.`,
        '',
        'CPU µs per round trip (median round), by process:',
        ...rows.map(
          (r) =>
            `- ${r.row}: ${r.subject}: ${cpuText(r.subjectFigures.cpuUsPerRoundTrip)}; ${r.baseline}: ${cpuText(r.baselineFigures.cpuUsPerRoundTrip)}`,
        ),
      ].join('\n'),
    );
    const report = {
      date: new Date().toISOString(),
      node: process.version,
      cpus: `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}`,
      load_average: { start: loadAtStart, end: loadAtEnd },
      connections: CONNECTIONS,
      duration_s: DURATION_S,
      rounds: ROUNDS,
      warmup_s: WARMUP_S,
      logging: LOGGING,
      quick: QUICK,
      rows,
    };
    if (flags.json) writeFileSync(flags.json, `${JSON.stringify(report, null, 2)}\n`);
  } finally {
    for (const child of children) await stop(child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const pct = (share: number) => `${Math.round(share * 100)} %`;
const cpuText = (cpu: Record<string, number>) =>
  Object.entries(cpu)
    .map(([name, us]) => `${name} ${us}`)
    .join(', ') || 'not measured';

await main();
