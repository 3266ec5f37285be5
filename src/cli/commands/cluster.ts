import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { clusterUp } from '../../service/cluster-up.ts';
import { argumentsAfter, UsageError, type WardCommand } from '../command.ts';

const USAGE = `Usage: ward cluster up [--instances N] [--port P]

Runs N registry instances (default 3) as separate processes on one PostgreSQL schema and one Redis,
behind HAProxy (apt-get install haproxy) on 127.0.0.1:P (default 8090), and prints their addresses.
Needs DATABASE_URL (and DATABASE_SCHEMA for a schema of its own); REDIS_URL defaults to
redis://127.0.0.1:6379. Stop it with Ctrl-C. docs/operations.md, "Several instances".
  --instances  how many registry instances (1 to 8)
  --port       the balancer's port (0: any free one)
Exit status: 0 stopped, 1 could not start, 2 usage.

Example:
  DATABASE_URL=postgres://root@127.0.0.1:5432/test node src/cli/ward.ts cluster up`;

/** `ward cluster up`: several instances behind a real balancer, for people to try (issue 16). */
export const clusterCommand: WardCommand = {
  name: 'cluster',
  usage: USAGE,
  async run(args) {
    const { values } = parseArgs({ args: argumentsAfter('up', args), options: { instances: { type: 'string', default: '3' }, port: { type: 'string', default: '8090' } }, strict: true });
    const instances = Number(values.instances);
    const port = Number(values.port);
    if (!Number.isInteger(instances) || instances < 1 || instances > 8 || !Number.isInteger(port) || port < 0 || port > 65535) {
      throw new UsageError('--instances takes 1 to 8 and --port a port');
    }
    const databaseUrl = process.env.DATABASE_URL;
    if (!databaseUrl) {
      console.error('ward cluster: DATABASE_URL is required: several instances share one PostgreSQL database');
      return 1;
    }
    const cluster = await clusterUp({
      databaseUrl,
      schema: process.env.DATABASE_SCHEMA,
      redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      dataDir: mkdtempSync(join(tmpdir(), 'ward-cluster-')),
      port,
      instances,
      log: (line) => console.log(line),
    }).catch((error: unknown) => {
      console.error(`ward cluster: could not start: ${(error as Error).message}`);
      return undefined;
    });
    if (!cluster) return 1;
    console.log(`Ward cluster: ${cluster.url} (${instances} instances; Ctrl-C stops them)`);
    const stop = () => void cluster.stop().then(() => process.exit(0));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    return 'running';
  },
};
