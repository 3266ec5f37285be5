import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TestContext } from 'node:test';
import { EventSource } from 'eventsource';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../src/core/clock.ts';
import { loadConfig } from '../../src/core/config.ts';
import { openStorage, type Backend, type Storage } from '../../src/registry/storage/database.ts';
import { buildRegistry } from '../../src/registry/app.ts';
import { EVENT_TYPES } from '../../src/contract/event-types.ts';
import type { EventRoutesOptions } from '../../src/registry/events/event-routes.ts';
import { agentBody, openTestStorage } from './registry.ts';

/**
 * Safety net only: turns a hang into a failure naming what was missing; asserts nothing about speed.
 * Far above a real wait on a busy machine: a computer-use run of a few turns, each driving Chromium,
 * took over 20 s on two cores with one held by a CPU hog.
 */
export const WAIT_TIMEOUT_MS = 90_000;

/** Clean-ups that run last-in first-out when the test ends: readers, then apps, then databases. */
export type Scope = { defer(cleanup: () => unknown): void };

export function testScope(t: Pick<TestContext, 'after'>): Scope {
  const cleanups: Array<() => unknown> = [];
  t.after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });
  return { defer: (cleanup) => cleanups.push(cleanup) };
}

export type ListeningRegistry = {
  app: FastifyInstance;
  baseUrl: string;
  storage: Storage;
  /** Every stream request this instance received, in order (headers and socket), for tests to inspect or cut. */
  streamRequests: IncomingMessage[];
};

/**
 * `count` registry instances on ONE fresh database, each listening on its own port. On PostgreSQL
 * every instance has its own storage (connection pool) on the same schema, like separate
 * processes; SQLite is single-process, so only one instance is allowed there.
 */
export async function startRegistries(
  scope: Scope,
  backend: Backend,
  options: { count?: number; events?: EventRoutesOptions; clock?: Clock; env?: Record<string, string> } = {},
): Promise<ListeningRegistry[]> {
  const count = options.count ?? 1;
  if (backend === 'sqlite' && count > 1) throw new Error('several instances need PostgreSQL');
  const first = await openTestStorage({ after: (cleanup) => scope.defer(() => (cleanup as () => unknown)()) }, backend);
  const env: Record<string, string> = { REGISTRY_ENV: 'test', REGISTRY_HEALTH_PROBES: 'false', ...first.env, ...options.env };
  const instances: ListeningRegistry[] = [];
  for (let i = 0; i < count; i += 1) {
    let storage: Storage = first;
    if (i > 0) {
      storage = await openStorage({ backend: 'postgres', url: env.DATABASE_URL ?? '', schema: env.DATABASE_SCHEMA ?? '', poolSize: 8 });
      const opened = storage;
      scope.defer(() => opened.close());
    }
    const app = await buildRegistry({
      config: loadConfig(env),
      storage,
      logger: false,
      events: { retryMs: 50, ...options.events },
      ...(options.clock ? { clock: options.clock } : {}),
    });
    scope.defer(() => {
      const closed = app.close();
      // The test's fetch client may hold a connection it never sent a request on; do not wait for
      // its idle timeout (seconds) at the end of every test.
      app.server.closeAllConnections();
      return closed;
    });
    const streamRequests: IncomingMessage[] = [];
    app.server.on('request', (request: IncomingMessage) => {
      if (request.url?.startsWith('/v1/events/stream')) streamRequests.push(request);
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    instances.push({ app, baseUrl: app.ward.baseUrl(), storage, streamRequests });
  }
  return instances;
}

/** Registers an agent over HTTP; returns its URI. */
export async function registerOverHttp(baseUrl: string, displayName: string): Promise<string> {
  const response = await fetch(`${baseUrl}/v1/agents`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-idempotency-key': randomUUID() },
    body: JSON.stringify(agentBody({ display_name: displayName })),
  });
  const body = (await response.json()) as { agent_id?: string };
  if (response.status !== 201 || !body.agent_id) throw new Error(`register failed: ${response.status} ${JSON.stringify(body)}`);
  return body.agent_id;
}

export type ReceivedEvent = { id: string; type: string; data: { seq: number; type: string; subject: string; occurred_at: string; data: Record<string, unknown> } };

export type EventCollector = {
  readonly events: ReceivedEvent[];
  /** `stream.dropped` notices, parsed. */
  readonly dropped: Array<{ reason: string; cursor: string }>;
  /** Resolves when the first connection is open (the stream's start position is fixed by then). */
  readonly opened: Promise<void>;
  /** Resolves once `predicate` holds for what was received; rejects after {@link WAIT_TIMEOUT_MS}. */
  waitUntil(predicate: (events: readonly ReceivedEvent[]) => boolean, what: string): Promise<void>;
  close(): void;
};

/**
 * A real SSE client (the `eventsource` package, WHATWG semantics: it reconnects by itself and sends
 * Last-Event-ID) collecting every registry event type. `fetch` may wrap the client's requests.
 */
export function collectEvents(scope: Scope, url: string, options: { fetch?: typeof fetch } = {}): EventCollector {
  const source = new EventSource(url, options.fetch ? { fetch: options.fetch } : {});
  scope.defer(() => source.close());
  const events: ReceivedEvent[] = [];
  const dropped: Array<{ reason: string; cursor: string }> = [];
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const waiter of waiters) waiter();
  };
  for (const type of EVENT_TYPES) {
    source.addEventListener(type, (event) => {
      events.push({ id: event.lastEventId, type: event.type, data: JSON.parse(event.data) });
      notify();
    });
  }
  source.addEventListener('stream.dropped', (event) => {
    dropped.push(JSON.parse(event.data));
    notify();
  });
  const opened = new Promise<void>((resolve) => source.addEventListener('open', () => resolve(), { once: true }));
  return {
    events,
    dropped,
    opened,
    waitUntil(predicate, what) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!predicate(events)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out waiting for ${what}; received seqs ${events.map((e) => e.id).join(',')}`));
        }, WAIT_TIMEOUT_MS);
        waiters.add(check);
        check();
      });
    },
    close: () => source.close(),
  };
}

/** The sequence numbers received, as numbers. */
export const seqsOf = (events: readonly ReceivedEvent[]) => events.map((event) => Number(event.id));

/** 1, 2, …, n. */
export const oneTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);
