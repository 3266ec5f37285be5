import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { commitChannelOf } from '../../../src/registry/storage/commit-signal.ts';
import { eventually } from '../../helpers/eventually.ts';
import { BACKENDS } from '../../helpers/registry.ts';
import {
  WAIT_TIMEOUT_MS,
  collectEvents,
  oneTo,
  registerOverHttp,
  seqsOf,
  startRegistries,
  testScope,
  type ListeningRegistry,
} from '../../helpers/listening.ts';

/** No ping during a test: the ping's safety-net re-read must not be what delivers events. */
const NO_PING = { pingIntervalMs: 10 * 60 * 1000 };

const suite = BACKENDS.includes('postgres') ? describe : describe.skip;

suite('several registry instances on one PostgreSQL [postgres]', () => {
  test('concurrent writers on two instances: every reader on either sees the same gap-free sequence, once each', async (t) => {
    const scope = testScope(t);
    const instances = await startRegistries(scope, 'postgres', { count: 2, events: NO_PING });
    const [a, b] = instances as [ListeningRegistry, ListeningRegistry];
    const readers = [a, b].flatMap((instance) => [
      collectEvents(scope, `${instance.baseUrl}/v1/events/stream`),
      collectEvents(scope, `${instance.baseUrl}/v1/events/stream?cursor=0`),
    ]);
    await Promise.all(readers.map((reader) => reader.opened));

    const WRITERS_PER_INSTANCE = 3;
    const WRITES_PER_WRITER = 8;
    const agentIds = (
      await Promise.all(
        [a, b].flatMap((instance, i) =>
          Array.from({ length: WRITERS_PER_INSTANCE }, async (_, w) => {
            const ids: string[] = [];
            for (let n = 0; n < WRITES_PER_WRITER; n += 1) ids.push(await registerOverHttp(instance.baseUrl, `Agent ${i}-${w}-${n}`));
            return ids;
          }),
        ),
      )
    ).flat();
    const total = agentIds.length * 2; // agent.registered + agent.trust_validated each
    await Promise.all(readers.map((reader, i) => reader.waitUntil((events) => events.length >= total, `${total} events on reader ${i}`)));

    for (const [i, reader] of readers.entries()) {
      assert.deepEqual(seqsOf(reader.events), oneTo(total), `reader ${i}: no gap, no duplicate`);
      assert.deepEqual(reader.events, readers[0]?.events, `reader ${i} saw what reader 0 saw`);
    }
    const registered = readers[0]!.events.filter((e) => e.type === 'agent.registered').map((e) => e.data.subject).sort();
    assert.deepEqual(registered, [...agentIds].sort(), 'every registration exactly once');

    // Both instances serve the same ledger: one leaf per event, one root.
    const heads = await Promise.all([a, b].map(async (instance) => (await fetch(`${instance.baseUrl}/v1/transparency/sth`)).json()));
    assert.equal((heads[0] as any).tree_size, total);
    assert.equal((heads[0] as any).root_hash, (heads[1] as any).root_hash);
  });

  test('a change committed on one instance wakes readers on another (LISTEN/NOTIFY)', async (t) => {
    const scope = testScope(t);
    const [a, b] = (await startRegistries(scope, 'postgres', { count: 2, events: NO_PING })) as [ListeningRegistry, ListeningRegistry];
    const reader = collectEvents(scope, `${b.baseUrl}/v1/events/stream`);
    await reader.opened;
    const agentId = await registerOverHttp(a.baseUrl, 'Written on A');
    await reader.waitUntil((events) => events.length >= 2, 'the registration on B');
    assert.deepEqual(reader.events.map((e) => [Number(e.id), e.data.subject]), [[1, agentId], [2, agentId]]);
  });

  test('the LISTEN connection comes back after the database drops it, and wakes readers again', async (t) => {
    const scope = testScope(t);
    const [a, b] = (await startRegistries(scope, 'postgres', { count: 2, events: NO_PING })) as [ListeningRegistry, ListeningRegistry];
    const reader = collectEvents(scope, `${b.baseUrl}/v1/events/stream`);
    await reader.opened;
    const listenQuery = `LISTEN "${await commitChannelOf(a.storage)}"`;
    const listeners = async () =>
      (await sql<{ pid: number }>`select pid from pg_stat_activity where query = ${listenQuery}`.execute(a.storage.db)).rows.map((r) => r.pid);
    const before = await listeners();
    assert.equal(before.length, 2, 'one LISTEN session per instance');
    await sql`select pg_terminate_backend(pid) from pg_stat_activity where query = ${listenQuery}`.execute(a.storage.db);

    // Both instances listen again, on new sessions.
    await eventually(
      async () => {
        const now = await listeners();
        return now.length === 2 && now.every((pid) => !before.includes(pid)) ? true : undefined;
      },
      'the listeners to come back on new sessions',
      WAIT_TIMEOUT_MS,
      20,
    );
    await registerOverHttp(a.baseUrl, 'After the reconnect');
    await reader.waitUntil((events) => events.length >= 2, 'the registration after the reconnect');
    assert.deepEqual(seqsOf(reader.events), [1, 2]);
  });
});
