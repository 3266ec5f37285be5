/**
 * Mesh benchmark (issue 7 acceptance): `tasks/send` + `tasks/get` round trips through the Ward
 * gateway (`ward gateway` as a child process, starting the shipped triage agent as its child) beside
 * the same pair through an `@a2a-js/sdk` server (`SendMessage` non-blocking + `GetTask`, also in a
 * child process: this file with `--serve-a2a`) on the same machine, and, for context, straight to the
 * Ward agent without the gateway. Load: autocannon in this process, each connection looping
 * send → get with the task id of its own send. Results go to stdout and, with `--json <file>`, to a
 * file; docs/performance.md (## Mesh) records a run.
 *
 *   npx node bench/mesh.ts [--duration 10] [--connections 16] [--rounds 3] [--json out.json]
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, JsonRpcTransportHandler, ServerCallContext, type AgentExecutor } from '@a2a-js/sdk/server';
import { TaskState } from '@a2a-js/sdk';
import autocannon from 'autocannon';
import { DEFAULT_MESH_JWT_SECRET } from '../src/core/config.ts';
import { issueMeshToken } from '../src/mesh/runtime/auth.ts';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '16' },
    warmup: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '3' },
    json: { type: 'string' },
    'serve-a2a': { type: 'boolean', default: false },
  },
});
const DURATION_S = Number(values.duration);
const CONNECTIONS = Number(values.connections);
const WARMUP_S = Number(values.warmup);
/** Scenarios run interleaved this many times; the median run of each is reported (a shared machine drifts). */
const ROUNDS = Number(values.rounds);
const CALLER = 'did:web:localhost:agents:bench';

type Scenario = {
  name: string;
  url: string;
  headers: Record<string, string>;
  sendBody: () => string;
  getBody: (taskId: string) => string;
  /** The task id from a send's answer; undefined when the answer is an error. */
  taskIdOf: (body: string) => string | undefined;
};

type Result = {
  name: string;
  roundTripsPerSecond: number;
  requestP50Ms: number;
  requestP99Ms: number;
  errors: number;
  non2xx: number;
  /** Answers with HTTP 200 but a JSON-RPC error: counted so a fast failure cannot pass for speed. */
  rpcErrors: number;
};

type LoopContext = { taskId?: string };

const isRpcError = (body: string): boolean => {
  try {
    return 'error' in (JSON.parse(body) as object);
  } catch {
    return true;
  }
};

/** One autocannon run of `scenario`; every connection loops send → get of its own task. */
async function run(scenario: Scenario, durationS: number): Promise<Result> {
  let rpcErrors = 0;
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
        setupRequest: (request, context) => ({ ...request, body: scenario.getBody((context as LoopContext).taskId ?? 'missing') }),
        onResponse: (_status, body) => {
          if (isRpcError(body)) rpcErrors += 1;
        },
      },
    ],
  });
  return {
    name: scenario.name,
    roundTripsPerSecond: Math.round(result.requests.total / 2 / durationS),
    requestP50Ms: result.latency.p50,
    requestP99Ms: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
    rpcErrors,
  };
}

/** The run with the median throughput. */
function median(results: Result[]): Result {
  return [...results].sort((a, b) => a.roundTripsPerSecond - b.roundTripsPerSecond)[Math.floor(results.length / 2)] as Result;
}

const TRIAGE_INPUT = {
  chief_complaint: 'chest pain',
  vital_signs: { respiratory_rate: 18, oxygen_saturation: 97, systolic_bp: 128, heart_rate: 88, consciousness: 'alert', temperature_c: 36.9 },
};

function meshScenario(name: string, url: string, token: string): Scenario {
  return {
    name,
    url,
    headers: { authorization: `Bearer ${token}`, 'x-agent-id': CALLER },
    sendBody: () =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tasks/send',
        params: { message: { kind: 'message', role: 'user', parts: [{ kind: 'data', data: TRIAGE_INPUT }] } },
      }),
    getBody: (taskId) => JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tasks/get', params: { task_id: taskId } }),
    taskIdOf: (body) => (JSON.parse(body) as { result?: { task_id: string } }).result?.task_id,
  };
}

/**
 * The a2a-js reference stack: DefaultRequestHandler, in-memory task store, its JSON-RPC transport
 * handler, on bare node:http (express is not installed). Prints its URL and serves until killed.
 */
async function serveA2a(): Promise<void> {
  const executor: AgentExecutor = {
    execute: async (context, bus) => {
      const status = (state: TaskState) => ({ state, timestamp: new Date().toISOString(), message: undefined });
      bus.publish(AgentEvent.task({ id: context.taskId, contextId: context.contextId, status: status(TaskState.TASK_STATE_SUBMITTED), artifacts: [], history: [context.userMessage], metadata: undefined }));
      bus.publish(AgentEvent.statusUpdate({ taskId: context.taskId, contextId: context.contextId, status: status(TaskState.TASK_STATE_COMPLETED), metadata: undefined }));
      bus.finished();
    },
    cancelTask: async () => undefined,
  };
  const card = {
    name: 'bench',
    description: 'a2a-js bench agent',
    version: '1.0.0',
    supportedInterfaces: [{ url: 'http://127.0.0.1/', protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }],
    capabilities: { streaming: true, pushNotifications: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [],
    signatures: [],
  };
  const transport = new JsonRpcTransportHandler(new DefaultRequestHandler(card as never, new InMemoryTaskStore(), executor));
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      transport.handle(Buffer.concat(chunks).toString('utf8'), new ServerCallContext()).then(
        (answer) => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer)),
        () => response.writeHead(500).end(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  console.log(`a2a listening http://127.0.0.1:${address && typeof address === 'object' ? address.port : 0}/`);
}

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** Starts a child process and resolves with the first match of `pattern` in its stdout. */
function startChild(args: string[], env: Record<string, string>, pattern: RegExp): Promise<{ child: ChildProcess; match: string }> {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      const match = pattern.exec(output)?.[1];
      if (match) {
        child.stdout?.removeAllListeners('data');
        child.stdout?.resume();
        resolve({ child, match });
      }
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
  });
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

function a2aScenario(url: string): Scenario {
  return {
    name: '@a2a-js/sdk server (SendMessage + GetTask)',
    url,
    headers: { 'a2a-version': '1.0' },
    sendBody: () =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: {
          message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'chest pain' }] },
          configuration: { returnImmediately: true },
        },
      }),
    getBody: (taskId) => JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'GetTask', params: { id: taskId } }),
    taskIdOf: (body) => (JSON.parse(body) as { result?: { task?: { id: string } } }).result?.task?.id,
  };
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'ward-bench-mesh-'));
  const secret = process.env.MESH_JWT_SECRET || DEFAULT_MESH_JWT_SECRET;
  const gateway = await startChild(
    ['src/cli/ward.ts', 'gateway'],
    { MESH_DATA_DIR: dataDir, GATEWAY_PORT: '0', MESH_LOG_LEVEL: 'warn', GATEWAY_IDLE_TIMEOUT_MS: '0', MESH_JWT_SECRET: secret },
    /Ward mesh gateway: (http:\/\/\S+)/,
  );
  const a2a = await startChild([fileURLToPath(import.meta.url), '--serve-a2a'], {}, /a2a listening (http:\/\/\S+)/);
  try {
    const token = await issueMeshToken({ secret, sub: CALLER, ttlSeconds: 3600 });
    const gatewayUrl = gateway.match;
    // Any call starts triage (and consent); the gateway's health then says where triage listens.
    const warmUp = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'tasks/get', params: { task_id: 'warm-up' } });
    await fetch(`${gatewayUrl}/rpc/triage`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'x-agent-id': CALLER }, body: warmUp });
    const health = (await (await fetch(`${gatewayUrl}/health`)).json()) as { agents: { alias: string; port: number | null }[] };
    const triagePort = health.agents.find((agent) => agent.alias === 'triage')?.port;
    const scenarios = [
      meshScenario('Ward gateway → triage agent (tasks/send + tasks/get)', `${gatewayUrl}/rpc/triage`, token),
      a2aScenario(a2a.match),
      meshScenario('Ward triage agent direct, no gateway', `http://127.0.0.1:${triagePort}/`, token),
    ];
    for (const scenario of scenarios) await run(scenario, WARMUP_S);
    const runs: Result[][] = scenarios.map(() => []);
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const [index, scenario] of scenarios.entries()) {
        const result = await run(scenario, DURATION_S);
        runs[index]?.push(result);
        console.log(`round ${round + 1} ${result.name}: ${result.roundTripsPerSecond} round trips/s, request p50 ${result.requestP50Ms} ms, p99 ${result.requestP99Ms} ms, errors ${result.errors}, non-2xx ${result.non2xx}, JSON-RPC errors ${result.rpcErrors}`);
      }
    }
    const results = runs.map(median);
    for (const result of results) console.log(`median ${result.name}: ${result.roundTripsPerSecond} round trips/s, p50 ${result.requestP50Ms} ms, p99 ${result.requestP99Ms} ms`);
    const [gatewayResult, a2aResult] = results as [Result, Result];
    const ratio = gatewayResult.roundTripsPerSecond / a2aResult.roundTripsPerSecond;
    console.log(`ratio gateway / a2a-js: ${ratio.toFixed(2)}`);
    const report = {
      date: new Date().toISOString(),
      node: process.version,
      cpus: `${cpus().length} × ${cpus()[0]?.model ?? 'unknown'}`,
      connections: CONNECTIONS,
      duration_s: DURATION_S,
      rounds: ROUNDS,
      results,
      runs,
      ratio_gateway_to_a2a: Number(ratio.toFixed(3)),
    };
    if (values.json) writeFileSync(values.json, `${JSON.stringify(report, null, 2)}\n`);
  } finally {
    await stop(gateway.child);
    await stop(a2a.child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (values['serve-a2a']) await serveA2a();
else await main();
