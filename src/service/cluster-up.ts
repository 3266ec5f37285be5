/**
 * `ward cluster up` (docs/operations.md, "Several instances"): registry instances as separate
 * processes on one PostgreSQL schema and one Redis, behind HAProxy from the system's packages on
 * loopback. The balancer spreads requests round-robin, checks each instance's `/readyz` every half
 * second, and keeps long event streams open (`timeout tunnel`). Used by people to see a cluster work,
 * and by the test that shows it does.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRegistryClient } from '../client/registry-client.ts';
import { freePort } from '../core/http/free-port.ts';
import { startRegistryProcess, stopRegistryProcess } from './federation-up.ts';

export type ClusterOptions = {
  databaseUrl: string;
  /** The PostgreSQL schema every instance shares (created when missing). */
  schema?: string | undefined;
  redisUrl: string;
  /** Where the balancer's configuration goes (each instance keeps nothing of its own there). */
  dataDir: string;
  /** The balancer's port; 0 for any free one. */
  port: number;
  instances?: number;
  /** Extra environment for every instance. */
  env?: Record<string, string>;
  haproxyPath?: string;
  log?: (line: string) => void;
};

export type ClusterInstance = { url: string; process: ChildProcess };

export type Cluster = {
  /** The balancer's address: what clients use. */
  url: string;
  instances: ClusterInstance[];
  balancer: ChildProcess;
  stop(): Promise<void>;
};

const READY_TIMEOUT_MS = 30_000;

export async function clusterUp(options: ClusterOptions): Promise<Cluster> {
  const count = options.instances ?? 3;
  const instances: ClusterInstance[] = [];
  let balancer: ChildProcess | undefined;
  const stop = async () => {
    if (balancer && balancer.exitCode === null && balancer.signalCode === null) {
      const exited = new Promise((resolve) => balancer?.once('exit', resolve));
      balancer.kill('SIGTERM');
      await exited;
    }
    await Promise.all(instances.map((instance) => stopRegistryProcess(instance.process)));
  };
  try {
    for (let index = 0; index < count; index += 1) {
      const started = await startRegistryProcess(
        { tier: 'root', name: 'cluster', jurisdiction: 'GB' },
        {
          port: 0,
          dataDir: join(options.dataDir, `instance-${index + 1}`),
          env: {
            DATABASE_URL: options.databaseUrl,
            ...(options.schema ? { DATABASE_SCHEMA: options.schema } : {}),
            REDIS_URL: options.redisUrl,
            ...(options.env ?? {}),
          },
        },
      );
      instances.push({ url: started.url, process: started.process });
      options.log?.(`instance ${index + 1}: ${started.url}`);
    }
    const port = options.port === 0 ? await freePort() : options.port;
    const config = join(options.dataDir, 'haproxy.cfg');
    writeFileSync(config, haproxyConfig(port, instances.map((instance) => new URL(instance.url).host)));
    balancer = spawn(options.haproxyPath ?? 'haproxy', ['-f', config, '-db'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    balancer.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4096)));
    const url = `http://127.0.0.1:${port}`;
    const viaBalancer = createRegistryClient({ baseUrl: url, userAgent: 'ward-cluster-up', timeoutMs: READY_TIMEOUT_MS, verifySignatures: false });
    await waitUntil(async () => {
      if (balancer?.exitCode !== null) throw new Error(`haproxy exited: ${stderr.trim()}`);
      return (await viaBalancer.readiness()).ok;
    });
    options.log?.(`balancer (HAProxy): ${url}`);
    return { url, instances, balancer, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Round-robin over the instances, each checked on /readyz; event streams may stay open an hour. */
export function haproxyConfig(port: number, servers: readonly string[]): string {
  return [
    'global',
    '  maxconn 4096',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 60s',
    '  timeout server 60s',
    '  timeout tunnel 1h',
    '  option redispatch',
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

