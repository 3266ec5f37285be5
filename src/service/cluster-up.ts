/**
 * `ward cluster up` (docs/operations.md, "Several instances"): registry instances as separate
 * processes on one PostgreSQL schema and one Redis, behind HAProxy from the system's packages on
 * loopback. The balancer spreads requests round-robin, checks each instance's `/readyz` every half
 * second, and keeps long event streams open (`timeout tunnel`). Each instance runs with the
 * operator's settings and is supervised (cluster-instance.ts): a dead one is restarted on its port,
 * and every change is written to `<dataDir>/cluster.json` for `ward cluster status`. Used by people to
 * see a cluster work, and by the tests that show it does.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRegistryClient } from '../client/registry-client.ts';
import { freePort } from '../core/http/free-port.ts';
import { SupervisedInstance, type InstanceStatus } from './cluster-instance.ts';

export type ClusterOptions = {
  databaseUrl: string;
  /** The PostgreSQL schema every instance shares (created when missing). */
  schema?: string | undefined;
  redisUrl: string;
  /** Where the balancer's configuration, the instances' data folders and the status file go. */
  dataDir: string;
  /**
   * The balancer's port, and with `basePort` the instances' after it (`basePort + 1` …); 0 for any
   * free ones.
   */
  port: number;
  /** Place the instances on the ports after `port` (`--base-port`) instead of any free ones. */
  basePort?: boolean;
  instances?: number;
  /**
   * The operator's settings, passed to every instance as they are: only the host, port and data
   * folder differ per instance, and the database and Redis are the cluster's (default `process.env`).
   */
  env?: Record<string, string | undefined>;
  /** Restart instances that die (default true). */
  supervise?: boolean;
  /** The wait before a first restart (default 1 s; doubled for each start in a row that did not last). */
  restartBackoffMs?: number;
  haproxyPath?: string;
  log?: (line: string) => void;
};

export type Cluster = {
  /** The balancer's address: what clients use. */
  url: string;
  instances: SupervisedInstance[];
  balancer: ChildProcess;
  /** Each instance's state, port, start time, restarts and last exit (also in `<dataDir>/cluster.json`). */
  status(): ClusterStatus;
  stop(): Promise<void>;
};

/** What `ward cluster status` reads: written by the supervisor on every change. */
export type ClusterStatus = { supervisor_pid: number; balancer_url: string; updated_at: string; instances: InstanceStatus[] };

export const CLUSTER_STATUS_FILE = 'cluster.json';

const READY_TIMEOUT_MS = 30_000;

/** Settings the cluster decides for each instance; every other one is the operator's. */
const PER_INSTANCE = /^(REGISTRY_(HOST|PORT|DATA_DIR)|DATABASE_URL|DATABASE_SCHEMA|REDIS_URL)$/;

export async function clusterUp(options: ClusterOptions): Promise<Cluster> {
  const count = options.instances ?? 3;
  const log = options.log ?? (() => {});
  const port = options.port === 0 ? await freePort() : options.port;
  const ports = options.basePort && options.port !== 0 ? Array.from({ length: count }, (_, i) => port + 1 + i) : await Promise.all(Array.from({ length: count }, () => freePort()));
  const url = `http://127.0.0.1:${port}`;
  let balancer: ChildProcess | undefined;
  const status = (): ClusterStatus => ({ supervisor_pid: process.pid, balancer_url: url, updated_at: new Date().toISOString(), instances: instances.map((instance) => instance.status()) });
  const writeStatus = () => {
    const file = join(options.dataDir, CLUSTER_STATUS_FILE);
    try {
      writeFileSync(`${file}.tmp`, `${JSON.stringify(status(), null, 2)}\n`);
      renameSync(`${file}.tmp`, file);
    } catch (error) {
      // The supervisor keeps supervising: a status file it cannot write is logged, not fatal.
      log(`cluster: could not write ${file}: ${(error as Error).message}`);
    }
  };
  const operator = Object.entries(options.env ?? process.env).filter((entry): entry is [string, string] => entry[1] !== undefined && !PER_INSTANCE.test(entry[0]));
  const instances = ports.map(
    (instancePort, i) =>
      new SupervisedInstance({
        index: i + 1,
        port: instancePort,
        env: {
          // Drained before it closes, so the balancer (checking every 500 ms, 2 failures) takes it out first.
          REGISTRY_SHUTDOWN_DRAIN_MS: '2000',
          ...Object.fromEntries(operator),
          REGISTRY_HOST: '127.0.0.1',
          REGISTRY_PORT: String(instancePort),
          REGISTRY_DATA_DIR: join(options.dataDir, `instance-${i + 1}`),
          DATABASE_URL: options.databaseUrl,
          ...(options.schema ? { DATABASE_SCHEMA: options.schema } : {}),
          REDIS_URL: options.redisUrl,
        },
        log,
        onChange: writeStatus,
        supervise: options.supervise ?? true,
        ...(options.restartBackoffMs === undefined ? {} : { backoffMs: options.restartBackoffMs }),
      }),
  );
  const stop = async () => {
    if (balancer && balancer.exitCode === null && balancer.signalCode === null) {
      const exited = new Promise((resolve) => balancer?.once('exit', resolve));
      balancer.kill('SIGTERM');
      await exited;
    }
    await Promise.all(instances.map((instance) => instance.stop()));
  };
  try {
    // One at a time: the first migrates the shared schema, the others find it done.
    for (const instance of instances) {
      await instance.start();
      log(`instance ${instance.status().instance}: ${instance.url}`);
    }
    const config = join(options.dataDir, 'haproxy.cfg');
    writeFileSync(config, haproxyConfig(port, ports.map((instancePort) => `127.0.0.1:${instancePort}`)));
    balancer = spawn(options.haproxyPath ?? 'haproxy', ['-f', config, '-db'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    balancer.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4096)));
    const viaBalancer = createRegistryClient({ baseUrl: url, userAgent: 'ward-cluster-up', timeoutMs: READY_TIMEOUT_MS, verifySignatures: false });
    await waitUntil(async () => {
      if (balancer?.exitCode !== null) throw new Error(`haproxy exited: ${stderr.trim()}`);
      return (await viaBalancer.readiness()).ok;
    });
    log(`balancer (HAProxy): ${url}`);
    writeStatus();
    return { url, instances, balancer, status, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The status the supervisor in `dataDir` last wrote; undefined when there is none. */
export function readClusterStatus(dataDir: string): ClusterStatus | undefined {
  try {
    return JSON.parse(readFileSync(join(dataDir, CLUSTER_STATUS_FILE), 'utf8')) as ClusterStatus;
  } catch {
    return undefined;
  }
}

/** Round-robin over the instances, each checked on /readyz; event streams may stay open an hour. */
export function haproxyConfig(port: number, servers: readonly string[], options: { statsSocket?: string } = {}): string {
  return [
    'global',
    '  maxconn 4096',
    // The runtime API (`show stat`: each server UP or DOWN), when asked for.
    ...(options.statsSocket ? [`  stats socket ${options.statsSocket} mode 600 level operator`] : []),
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 60s',
    '  timeout server 60s',
    '  timeout tunnel 1h',
    '  option redispatch',
    // A reader that leaves an event stream is passed on to its instance at once; without this the
    // instance found out at its next ping (15 to 30 s later) and counted the stream till then.
    '  option abortonclose',
    '  retries 2',
    'frontend ward',
    `  bind 127.0.0.1:${port}`,
    '  default_backend registries',
    'backend registries',
    '  balance roundrobin',
    '  option httpchk GET /readyz',
    '  http-check expect status 200',
    '  default-server inter 500ms fall 2 rise 1',
    ...servers.map((server, index) => `  server instance-${index + 1} ${server} check`),
    '',
  ].join('\n');
}

async function waitUntil(ready: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`the cluster was not ready within ${READY_TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
