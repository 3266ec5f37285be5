import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createRegistryClient } from '../../client/registry-client.ts';
import { clusterUp, readClusterStatus, type ClusterStatus } from '../../service/cluster-up.ts';
import { MAX_FAILED_STARTS } from '../../service/cluster-instance.ts';
import { UsageError, type WardCommand } from '../command.ts';

const USAGE = `Usage: ward cluster up [--instances N] [--base-port P | --port P] [--data-dir D]
       ward cluster status [--data-dir D] [--json]

up: runs N registry instances (default 3) as separate processes on one PostgreSQL schema and one
Redis, behind HAProxy (apt-get install haproxy) on 127.0.0.1, and prints their addresses. Every
instance runs with your settings (REGISTRY_*, DATABASE_SCHEMA, …); only its host, port and data
folder are its own. A dead instance is restarted on its port after 1 s, 2 s, 4 s … (at most 30 s),
and left stopped after ${MAX_FAILED_STARTS} restarts in a row that did not last a minute; each death is logged
with its exit code and last error lines. Needs DATABASE_URL (and DATABASE_SCHEMA for a schema of its
own); REDIS_URL defaults to redis://127.0.0.1:6379. Stop it with Ctrl-C. docs/operations.md,
"Several instances".
  --instances  how many registry instances (1 to 8)
  --base-port  the balancer on P, the instances on P+1 … P+N
  --port       the balancer on P (default 8090), the instances on free ports (0: all free ones)
  --data-dir   where the balancer's configuration and the status file go (default ./data/cluster)
status: each instance's state, port, uptime, restarts, last exit and readiness, from the status file
the running 'ward cluster up' keeps in --data-dir.
  --json       the status as JSON, with "ready" for each instance
Exit status: up: 0 stopped, 1 could not start, 2 usage. status: 0 every instance ready, 1 no cluster
runs there, 3 one or more instances not ready.

Example:
  DATABASE_URL=postgres://root@127.0.0.1:5432/test npx ward cluster up --base-port 8090
  npx ward cluster status`;

const DEFAULT_DATA_DIR = 'data/cluster';

/** `ward cluster up` and `ward cluster status`: several supervised instances behind a real balancer (issues 16, 35). */
export const clusterCommand: WardCommand = {
  name: 'cluster',
  usage: USAGE,
  async run(args) {
    const [action, ...rest] = args;
    if (action === 'up') return up(rest);
    if (action === 'status') return status(rest);
    throw new UsageError(action === undefined ? '' : `unknown action "${action}"`);
  },
};

async function up(args: string[]): Promise<number | 'running'> {
  const { values } = parseArgs({
    args,
    options: { instances: { type: 'string', default: '3' }, port: { type: 'string' }, 'base-port': { type: 'string' }, 'data-dir': { type: 'string', default: DEFAULT_DATA_DIR } },
    strict: true,
  });
  if (values.port !== undefined && values['base-port'] !== undefined) throw new UsageError('give --base-port or --port, not both');
  const instances = Number(values.instances);
  const port = Number(values['base-port'] ?? values.port ?? '8090');
  if (!Number.isInteger(instances) || instances < 1 || instances > 8) throw new UsageError('--instances takes 1 to 8');
  const basePort = values['base-port'] !== undefined;
  if (!Number.isInteger(port) || port < (basePort ? 1 : 0) || port + (basePort ? instances : 0) > 65535) throw new UsageError(`--${basePort ? 'base-port' : 'port'} takes a port${basePort ? ' with room for the instances after it' : ''}`);
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    console.error('ward cluster: DATABASE_URL is required: several instances share one PostgreSQL database');
    return 1;
  }
  const dataDir = resolve(values['data-dir']);
  mkdirSync(dataDir, { recursive: true });
  const cluster = await clusterUp({
    databaseUrl,
    schema: process.env.DATABASE_SCHEMA,
    redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    dataDir,
    port,
    basePort,
    instances,
    log: (line) => console.log(line),
  }).catch((error: unknown) => {
    console.error(`ward cluster: could not start: ${(error as Error).message}`);
    return undefined;
  });
  if (!cluster) return 1;
  console.log(`Ward cluster: ${cluster.url} (${instances} instances; 'ward cluster status --data-dir ${values['data-dir']}' shows them; Ctrl-C stops them)`);
  const stop = () => void cluster.stop().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return 'running';
}

async function status(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { 'data-dir': { type: 'string', default: DEFAULT_DATA_DIR }, json: { type: 'boolean', default: false } }, strict: true });
  const known = readClusterStatus(resolve(values['data-dir']));
  if (!known || !isRunning(known.supervisor_pid)) {
    console.error(`ward cluster: no cluster runs from ${values['data-dir']}${known ? ` (its supervisor, pid ${known.supervisor_pid}, has stopped)` : ''}; start one with 'ward cluster up'`);
    return 1;
  }
  const ready = await Promise.all(known.instances.map((instance) => isReady(instance.url)));
  if (values.json) console.log(JSON.stringify({ ...known, instances: known.instances.map((instance, i) => ({ ...instance, ready: ready[i] })) }, null, 2));
  else console.log(statusTable(known, ready));
  return ready.every(Boolean) ? 0 : 3;
}

function statusTable(known: ClusterStatus, ready: boolean[]): string {
  const now = Date.now();
  const rows = known.instances.map((instance, i) => [
    String(instance.instance),
    String(instance.port),
    instance.state,
    ready[i] ? 'yes' : 'no',
    instance.started_at ? duration(now - Date.parse(instance.started_at)) : '-',
    String(instance.restarts),
    instance.last_exit ? `${instance.last_exit.signal ?? `code ${instance.last_exit.code}`} at ${instance.last_exit.at}` : '-',
  ]);
  const header = ['instance', 'port', 'state', 'ready', 'uptime', 'restarts', 'last exit'];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] as string).length)));
  const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column] as number)).join('  ').trimEnd();
  return [`Ward cluster: ${known.balancer_url} (supervisor pid ${known.supervisor_pid})`, line(header), ...rows.map(line)].join('\n');
}

function duration(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(seconds / 3600)}h${String(Math.floor((seconds % 3600) / 60)).padStart(2, '0')}m`;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function isReady(url: string): Promise<boolean> {
  const client = createRegistryClient({ baseUrl: url, userAgent: 'ward-cluster-status', timeoutMs: 1000, verifySignatures: false });
  return (await client.readiness().catch(() => undefined))?.ok === true;
}
