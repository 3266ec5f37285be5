import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import {
  IDEMPOTENCY_LOCK_MS,
  IDEMPOTENCY_RETENTION_MS,
  idempotencyScopeKey,
  requestFingerprint,
} from '../../../src/registry/storage/idempotency.ts';
import { ClaimLostError, findIdempotencyRecord, insertClaim, releaseClaim } from '../../../src/registry/storage/stores/idempotency-store.ts';
import { runWrite } from '../../../src/registry/storage/write-unit.ts';
import { BACKENDS, agentBody, buildTestRegistry, ulidOf } from '../../helpers/registry.ts';

/** A clock the test moves by hand. */
function manualClock(start = Date.parse('2026-11-22T10:00:00.000Z')) {
  let now = start;
  return { now: () => new Date(now), advance: (ms: number) => void (now += ms) };
}

for (const backend of BACKENDS) {
  describe(`idempotency keys [${backend}]`, () => {
    test('a POST without X-Idempotency-Key is 400 IDEMPOTENCY_KEY_REQUIRED and creates nothing', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const response = await registry.call({ method: 'POST', url: '/v1/agents', payload: agentBody() });
      assert.equal(response.status, 400);
      assert.equal(response.body.error.code, 'IDEMPOTENCY_KEY_REQUIRED');
      assert.equal((await registry.call({ method: 'GET', url: '/v1/agents' })).body.total_count, 0);
    });

    test('a key that is not a UUID is 422 pointing at the header', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const response = await registry.call({ method: 'POST', url: '/v1/agents', headers: { 'x-idempotency-key': 'abc' }, payload: agentBody() });
      assert.equal(response.status, 422);
      assert.deepEqual(response.body.error.details.errors, [{ in: 'header', pointer: '/x-idempotency-key', reason: 'must be a UUID' }]);
    });

    test('a retried create returns the stored record with 200 and Idempotent-Replayed, executing nothing again', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const request = { method: 'POST' as const, url: '/v1/agents', headers: { 'x-idempotency-key': randomUUID() }, payload: agentBody() };
      const first = await registry.call(request);
      const second = await registry.call(request);
      assert.equal(first.status, 201);
      assert.equal(first.headers['idempotent-replayed'], undefined);
      assert.equal(second.status, 200);
      assert.equal(second.headers['idempotent-replayed'], 'true');
      assert.equal(second.headers.location, first.headers.location);
      assert.equal(second.headers.etag, first.headers.etag);
      assert.deepEqual(second.body, first.body);
      assert.equal((await registry.call({ method: 'GET', url: '/v1/agents' })).body.total_count, 1);
    });

    test('the same body with its keys in another order is the same request', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const key = randomUUID();
      const body = agentBody();
      const reordered = Object.fromEntries(Object.entries(body).reverse());
      const first = await registry.call({ method: 'POST', url: '/v1/agents', headers: { 'x-idempotency-key': key }, payload: body });
      const second = await registry.call({ method: 'POST', url: '/v1/agents', headers: { 'x-idempotency-key': key }, payload: reordered });
      assert.equal(first.status, 201);
      assert.equal(second.status, 200);
    });

    test('the same key with a different body is 409 IDEMPOTENCY_KEY_REUSED', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const key = randomUUID();
      await registry.call({ method: 'POST', url: '/v1/agents', headers: { 'x-idempotency-key': key }, payload: agentBody() });
      const reused = await registry.call({ method: 'POST', url: '/v1/agents', headers: { 'x-idempotency-key': key }, payload: agentBody() });
      assert.equal(reused.status, 409);
      assert.equal(reused.body.error.code, 'IDEMPOTENCY_KEY_REUSED');
      assert.equal(reused.body.error.retryable, false);
    });

    test('the same key on another path is a different request', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const key = randomUUID();
      const a = await registry.call({ method: 'POST', url: '/v1/agents', headers: { 'x-idempotency-key': key }, payload: agentBody() });
      const b = await registry.call({ method: 'POST', url: `/v1/agents/${ulidOf(a.body.agent_id)}/suspend`, headers: { 'x-idempotency-key': key }, payload: { reason: 'review' } });
      assert.equal(b.status, 200);
      assert.equal(b.body.status, 'suspended');
    });

    test('two identical requests racing create one agent; the loser is told to retry or gets the replay', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const request = { method: 'POST' as const, url: '/v1/agents', headers: { 'x-idempotency-key': randomUUID() }, payload: agentBody() };
      const responses = await Promise.all(Array.from({ length: 6 }, () => registry.call(request)));
      const statuses = responses.map((r) => r.status).sort();
      assert.equal(statuses.filter((s) => s === 201).length, 1, statuses.join());
      for (const response of responses.filter((r) => r.status === 409)) {
        assert.equal(response.body.error.code, 'IDEMPOTENCY_KEY_IN_PROGRESS');
        assert.equal(response.body.error.retryable, true);
        // No heartbeat runs in an app driven by inject(): its claims name no holder, so the honest
        // wait is what is left of the 60 s lock (a listening instance's is its heartbeat's lapse).
        const hint = response.body.error.retry_after_ms as number;
        assert.ok(hint > IDEMPOTENCY_LOCK_MS - 10_000 && hint <= IDEMPOTENCY_LOCK_MS + 250, String(hint));
        assert.equal(response.headers['retry-after'], String(Math.ceil(hint / 1000)));
      }
      assert.ok(responses.every((r) => [200, 201, 409].includes(r.status)), statuses.join());
      assert.equal((await registry.call({ method: 'GET', url: '/v1/agents' })).body.total_count, 1);
      const settled = await registry.call(request);
      assert.equal(settled.status, 200);
    });

    test('a failed request stores nothing under its key, so a corrected retry with the same key runs', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const key = randomUUID();
      const bad = await registry.call({ method: 'POST', url: '/v1/agents', headers: { 'x-idempotency-key': key }, payload: agentBody({ jurisdiction: 'UK' }) });
      assert.equal(bad.status, 422);
      const good = await registry.call({ method: 'POST', url: '/v1/agents', headers: { 'x-idempotency-key': key }, payload: agentBody() });
      assert.equal(good.status, 201);
    });

    test('a request rejected for PHI stores nothing, not even under its key', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const key = randomUUID();
      const phi = await registry.call({
        method: 'POST',
        url: '/v1/agents',
        headers: { 'x-idempotency-key': key },
        payload: agentBody({ description: 'Patient NHS number 943 476 5919' }),
      });
      assert.equal(phi.status, 422);
      assert.equal(phi.body.error.code, 'PHI_DETECTED');
      const rows = await registry.storage.db.selectFrom('idempotency_keys').selectAll().execute();
      assert.equal(rows.length, 0);
      assert.equal((await registry.storage.db.selectFrom('events').selectAll().execute()).length, 0);
    });

    test('a claim abandoned by a crashed request is taken over once its lock expires', async (t) => {
      const clock = manualClock();
      const registry = await buildTestRegistry(t, backend, { clock });
      const key = randomUUID();
      const body = agentBody();
      // What a process killed mid-request leaves behind: a claim with no response.
      await registry.storage.db
        .insertInto('idempotency_keys')
        .values({
          scope_key: idempotencyScopeKey('anonymous', 'POST', '/v1/agents', key),
          request_hash: requestFingerprint(body, undefined),
          state: 'in_progress',
          status_code: null,
          response_headers: null,
          response_body: null,
          locked_until: new Date(clock.now().getTime() + IDEMPOTENCY_LOCK_MS).toISOString(),
          expires_at: new Date(clock.now().getTime() + IDEMPOTENCY_RETENTION_MS).toISOString(),
          created_at: clock.now().toISOString(),
        })
        .execute();
      const blocked = await registry.call({ method: 'POST', url: '/v1/agents', headers: { 'x-idempotency-key': key }, payload: body });
      assert.equal(blocked.body.error.code, 'IDEMPOTENCY_KEY_IN_PROGRESS');
      clock.advance(IDEMPOTENCY_LOCK_MS + 1);
      const taken = await registry.call({ method: 'POST', url: '/v1/agents', headers: { 'x-idempotency-key': key }, payload: body });
      assert.equal(taken.status, 201);
    });

    test("a claim whose holder's heartbeat has lapsed is taken over at once; one whose holder beats waits as long as its heartbeat says", async (t) => {
      const clock = manualClock();
      const registry = await buildTestRegistry(t, backend, { clock });
      const now = clock.now().getTime();
      const plant = async (key: string, body: unknown, holder: string) =>
        registry.storage.db
          .insertInto('idempotency_keys')
          .values({
            scope_key: idempotencyScopeKey('anonymous', 'POST', '/v1/agents', key),
            request_hash: requestFingerprint(body, undefined),
            state: 'in_progress',
            status_code: null,
            response_headers: null,
            response_body: null,
            locked_until: new Date(now + IDEMPOTENCY_LOCK_MS).toISOString(),
            expires_at: new Date(now + IDEMPOTENCY_RETENTION_MS).toISOString(),
            created_at: new Date(now).toISOString(),
            holder,
            claim_token: randomUUID(),
          })
          .execute();
      // One holder beats (its lease runs 6 s more), the other's lease lapsed a moment ago.
      await registry.storage.db
        .insertInto('leases')
        .values([
          { name: 'instance:alive', holder: 'alive', expires_at: new Date(now + 6000).toISOString(), detail: null },
          { name: 'instance:gone', holder: 'gone', expires_at: new Date(now - 1).toISOString(), detail: null },
        ])
        .execute();
      const [aliveKey, goneKey, unknownKey] = [randomUUID(), randomUUID(), randomUUID()];
      const [aliveBody, goneBody, unknownBody] = [agentBody(), agentBody(), agentBody()];
      await plant(aliveKey, aliveBody, 'alive');
      await plant(goneKey, goneBody, 'gone');
      await plant(unknownKey, unknownBody, 'never-beat');
      const post = (key: string, body: Record<string, unknown>) => registry.call({ method: 'POST', url: '/v1/agents', headers: { 'x-idempotency-key': key }, payload: body });

      assert.equal((await post(goneKey, goneBody)).status, 201, 'a lapsed holder is taken over at once');
      assert.equal((await post(unknownKey, unknownBody)).status, 201, 'a holder with no heartbeat at all is taken over at once');
      const waiting = await post(aliveKey, aliveBody);
      assert.equal(waiting.body.error.code, 'IDEMPOTENCY_KEY_IN_PROGRESS');
      assert.equal(waiting.body.error.retry_after_ms, 6250, "the holder's heartbeat runs 6 s more (and 250 ms for clocks)");
      assert.equal(waiting.headers['retry-after'], '7');
      clock.advance(5999);
      assert.equal((await post(aliveKey, aliveBody)).body.error.retry_after_ms, 251);
      clock.advance(1);
      assert.equal((await post(aliveKey, aliveBody)).status, 201, 'taken over once the heartbeat lapses');
      assert.equal((await registry.call({ method: 'GET', url: '/v1/agents' })).body.total_count, 3);
    });

    test('a request whose claim was taken over meanwhile commits nothing and leaves the taker its claim', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const scopeKey = 'taken-over';
      const at = new Date(Date.now() + 60_000).toISOString();
      await insertClaim(registry.storage.db, { scope_key: scopeKey, request_hash: 'h', locked_until: at, expires_at: at, created_at: at, holder: 'slow', claim_token: 'mine' });
      // Another instance takes it over (the holder's heartbeat lapsed while it was paused).
      await registry.storage.db.updateTable('idempotency_keys').set({ holder: 'taker', claim_token: 'theirs' }).where('scope_key', '=', scopeKey).execute();
      const write = runWrite(registry.storage, async (unit) => {
        unit.emit({ type: 'agent.updated', subject: 'urn:test', occurred_at: at, data: {} });
        unit.completeClaim({ scope_key: scopeKey, claim_token: 'mine', status_code: 201, headers: {}, body: '{}' });
      });
      await assert.rejects(write, ClaimLostError);
      assert.equal((await registry.storage.db.selectFrom('events').selectAll().execute()).length, 0, 'the change rolled back');
      await releaseClaim(registry.storage.db, scopeKey, 'mine');
      const record = await findIdempotencyRecord(registry.storage.db, scopeKey);
      assert.deepEqual([record?.state, record?.holder, record?.claim_token], ['in_progress', 'taker', 'theirs'], "the loser's release leaves the taker's claim");
    });

    test('keys expire after 24 hours: the same key may then be used again', async (t) => {
      const clock = manualClock();
      const registry = await buildTestRegistry(t, backend, { clock });
      const key = randomUUID();
      const first = await registry.call({ method: 'POST', url: '/v1/agents', headers: { 'x-idempotency-key': key }, payload: agentBody() });
      assert.equal(first.status, 201);
      clock.advance(IDEMPOTENCY_RETENTION_MS - 1000);
      const within = await registry.call({ method: 'POST', url: '/v1/agents', headers: { 'x-idempotency-key': key }, payload: agentBody() });
      assert.equal(within.body.error.code, 'IDEMPOTENCY_KEY_REUSED');
      clock.advance(2000);
      const after = await registry.call({ method: 'POST', url: '/v1/agents', headers: { 'x-idempotency-key': key }, payload: agentBody() });
      assert.equal(after.status, 201);
    });
  });
}
