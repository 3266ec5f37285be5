import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { TestContext } from 'node:test';
import type { FastifyInstance, InjectOptions } from 'fastify';
import pg from 'pg';
import type { Clock } from '../../src/core/clock.ts';
import { loadConfig } from '../../src/core/config.ts';
import { openStorage, type Backend, type Storage } from '../../src/registry/storage/database.ts';
import { buildRegistry } from '../../src/registry/app.ts';

/** SQLite always; PostgreSQL too when TEST_DATABASE_URL is set (CI sets it). */
export const BACKENDS: readonly Backend[] = process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];

type Hookable = Pick<TestContext, 'after'>;

/** A fresh, empty database of the given kind, removed when the test ends. */
export async function openTestStorage(t: Hookable, backend: Backend): Promise<Storage & { env: Record<string, string> }> {
  if (backend === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'ward-test-'));
    const storage = await openStorage({ backend: 'sqlite', path: join(dir, 'registry.sqlite') });
    t.after(async () => {
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    });
    return Object.assign(storage, { env: { REGISTRY_DATA_DIR: dir } });
  }
  const url = process.env.TEST_DATABASE_URL as string;
  const schema = `ward_t_${randomBytes(6).toString('hex')}`;
  const storage = await openStorage({ backend: 'postgres', url, schema, poolSize: 8 });
  t.after(async () => {
    await storage.close();
    await dropSchema(url, schema);
  });
  return Object.assign(storage, { env: { DATABASE_URL: url, DATABASE_SCHEMA: schema } });
}

async function dropSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

export type TestRegistry = {
  app: FastifyInstance;
  storage: Storage;
  /**
   * The `msg` and `err.message` of each warning the registry logged, in order, when built with
   * `logs: true` (empty otherwise): a positive marker a test can wait for, e.g. a background round that
   * ends in a refusal (docs/testing.md, "How tests wait").
   */
  warnings: string[];
  /** `app.inject` with JSON parsed. */
  call(options: InjectOptions): Promise<{ status: number; headers: Record<string, unknown>; body: any }>;
};

/** A registry app on a fresh database; closed when the test ends. */
export async function buildTestRegistry(
  t: Hookable,
  backend: Backend,
  options: { env?: Record<string, string>; clock?: Clock; logs?: boolean } = {},
): Promise<TestRegistry> {
  const storage = await openTestStorage(t, backend);
  const config = loadConfig({ REGISTRY_ENV: 'test', ...storage.env, ...(options.logs ? { REGISTRY_LOG_LEVEL: 'warn' } : {}), ...options.env });
  const warnings: string[] = [];
  const logging = options.logs ? { logStream: warningsInto(warnings) } : { logger: false as const };
  const app = await buildRegistry({ config, storage, ...logging, ...(options.clock ? { clock: options.clock } : {}) });
  t.after(async () => {
    const closing = app.close();
    // A background request between registries (an OIDF chain rebuilt behind a request already answered)
    // may hold a keep-alive connection busy as the test ends: server.close() would then wait out the
    // 72 s keep-alive timeout after it. The test is over; its connections go.
    if (app.server.listening) app.server.closeAllConnections();
    await closing;
  });
  return {
    app,
    storage,
    warnings,
    async call(request) {
      const response = await app.inject(request);
      const text = response.body;
      return { status: response.statusCode, headers: response.headers, body: text ? JSON.parse(text) : undefined };
    },
  };
}

/** A pino destination keeping each warning (or worse) as `msg: err.message`. */
function warningsInto(warnings: string[]): Writable {
  return new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) {
        const entry = JSON.parse(line) as { level: number; msg?: string; err?: { message?: string } };
        if (entry.level >= 40) warnings.push(entry.err?.message ? `${entry.msg}: ${entry.err.message}` : String(entry.msg));
      }
      done();
    },
  });
}

/** Headers for a state-changing request with a fresh idempotency key. */
export function writeHeaders(extra: Record<string, string> = {}): Record<string, string> {
  return { 'x-idempotency-key': randomUUID(), ...extra };
}

/** A valid registration body; `overrides` replace top-level fields. */
export function agentBody(overrides: Record<string, unknown> = {}): Record<string, any> {
  return {
    display_name: `Triage assistant ${randomBytes(3).toString('hex')}`,
    jurisdiction: 'GB',
    endpoints: [
      { url: 'https://agents.example.org/triage', protocol: 'mesh-a2a-jsonrpc', priority: 10, region: 'uk-south' },
    ],
    capabilities: { protocols: ['mesh-a2a-jsonrpc'], skills: ['triage.assess'], fhir_r4: false },
    trust: { certificates: [], signatures: [], attestations: [] },
    owner: { org_id: 'org-nhs-example', org_name: 'Example NHS Trust', operator: 'ops@trust.example.org' },
    description: 'Rule-based urgency assessment for chest pain and stroke pathways.',
    policy_tags: { purpose_of_use: ['treatment'] },
    ...overrides,
  };
}

/** Registers an agent and returns the record (asserting success). */
export async function registerAgent(registry: TestRegistry, overrides: Record<string, unknown> = {}) {
  const response = await registry.call({ method: 'POST', url: '/v1/agents', headers: writeHeaders(), payload: agentBody(overrides) });
  if (response.status !== 201) throw new Error(`register failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

export function ulidOf(agentId: string): string {
  return agentId.slice(agentId.lastIndexOf('/') + 1);
}
