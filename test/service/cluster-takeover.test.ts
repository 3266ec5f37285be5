/**
 * Requests in flight on an instance that dies (issue 35, item 1): two `ward registry` processes on one
 * PostgreSQL schema and one Redis, a bounded write load with idempotency keys on the first, which is
 * SIGKILLed mid-load. Every request it never answered is retried on the second, following the
 * `retry_after_ms` hint: each must be answered once the dead holder's heartbeat lapses (6 s) and its
 * claims are taken over (the goal, 10 s after the kill, is reported, not asserted: a wall-clock bound
 * belongs to a benchmark, docs/testing.md), none may run twice (agents, events and ledger leaves
 * counted in the database), and no hint may be below the real wait (a retry made when the hint says
 * is never refused again).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { freePort } from '../../src/core/http/free-port.ts';
import { startRegistryProcess, stopRegistryProcess } from '../../src/service/federation-up.ts';
import { agentBody } from '../helpers/registry.ts';

const DATABASE_URL = process.env.TEST_DATABASE_URL;
/** Requests in the whole load, and how many are answered before the kill. */
const KILL_AFTER = 90;
/** Kills at most, until one leaves claims in progress (see the test). */
const KILLS = 5;
const LOAD = KILL_AFTER * KILLS + 60;
const WRITERS = 8;
/** The goal: every request cut off by the kill is answered this soon after it (reported). */
const GOAL_MS = 10_000;
/**
 * A safety net, not the goal: a request still unanswered this long after the kill is stuck (no
 * takeover at all), whatever the machine's load.
 */
const STUCK_MS = 6 * GOAL_MS;

type Instance = Awaited<ReturnType<typeof startRegistryProcess>>;
type Sent = { key: string; body: Record<string, unknown> };

async function post(url: string, sent: Sent) {
  const response = await fetch(`${url}/v1/agents`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-idempotency-key': sent.key },
    body: JSON.stringify(sent.body),
  });
  const body = (await response.json()) as any;
  return { status: response.status, body, retryAfter: response.headers.get('retry-after') };
}

describe('an instance killed with requests in flight', { skip: DATABASE_URL ? false : 'needs TEST_DATABASE_URL' }, () => {
  const schema = `ward_takeover_${Date.now().toString(36)}`;
  let dataDir: string;
  let client: pg.Client;
  const instances: Instance[] = [];

  const start = async (name: string) => {
    const instance = await startRegistryProcess(
      { tier: 'organisational', name: 'takeover', jurisdiction: 'GB' },
      { port: await freePort(), dataDir: join(dataDir, name), env: { DATABASE_URL: DATABASE_URL as string, DATABASE_SCHEMA: schema, REDIS_URL: 'redis://127.0.0.1:6379' } },
    );
    instances.push(instance);
    return instance;
  };

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'ward-takeover-'));
    client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
  });
  after(async () => {
    await Promise.all(instances.map((instance) => stopRegistryProcess(instance.process, 'SIGKILL')));
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('every request it never answered is answered on another instance within 10 s, once, and no hint is below the wait', async (t) => {
    // One at a time: the first migrates the schema.
    const firstVictim = await start('victim-0');
    const survivor = await start('survivor');
    const sent: Sent[] = Array.from({ length: LOAD }, (_, n) => ({ key: randomUUID(), body: agentBody({ display_name: `Takeover ${n}` }) }));
    const answered = new Map<string, string>(); // key -> agent id
    const cutOff: Sent[] = [];
    let next = 0;
    let killedAt = 0;
    let strandedClaims = 0;
    let kills = 0;
    // A kill can land when every request in flight is before its claim or past its answer (a fast
    // machine); then there is nothing to take over, and the load goes on against a new victim. The
    // requests those kills cut off are retried below with the rest (they have no claim to wait for).
    for (let victim: Instance | undefined = firstVictim; strandedClaims === 0 && kills < KILLS; victim = undefined) {
      const target = victim ?? (await start(`victim-${kills}`));
      const killAt = answered.size + KILL_AFTER;
      let kill: Promise<void> | undefined;
      killedAt = 0;
      const writer = async () => {
        while (next < sent.length && killedAt === 0) {
          const request = sent[next++] as Sent;
          const answer = await post(target.url, request).catch(() => undefined);
          if (answer && answer.status === 201) answered.set(request.key, answer.body.agent_id);
          else cutOff.push(request);
          if (answered.size >= killAt && !kill) {
            killedAt = performance.now();
            kill = stopRegistryProcess(target.process, 'SIGKILL');
          }
        }
      };
      await Promise.all(Array.from({ length: WRITERS }, writer));
      await kill;
      assert.ok(killedAt > 0, 'the victim was killed mid-load');
      kills += 1;
      const { rows: stranded } = await client.query(`select count(*)::int as n from "${schema}".idempotency_keys where state = 'in_progress' and holder is not null`);
      strandedClaims = stranded[0].n as number;
    }
    assert.ok(cutOff.length >= 1, 'requests were in flight at the kill');
    assert.ok(strandedClaims >= 1, `the kill left claims in progress (nothing to take over otherwise), in ${kills} kill(s)`);

    // Retry every request the victim never answered on the survivor, as a client that follows the
    // hint would. A hint below the real wait shows up as a second refusal of the same key.
    const waits: number[] = [];
    const hints: number[] = [];
    const refusedAfterHint: string[] = [];
    await Promise.all(
      cutOff.map(async (request) => {
        let waitedForHint = false;
        for (;;) {
          const answer = await post(survivor.url, request);
          if (answer.status === 409 && answer.body.error.code === 'IDEMPOTENCY_KEY_IN_PROGRESS') {
            if (waitedForHint) refusedAfterHint.push(request.key);
            const hint = answer.body.error.retry_after_ms as number;
            assert.equal(answer.retryAfter, String(Math.ceil(hint / 1000)), 'Retry-After is the hint in seconds, rounded up');
            assert.ok(hint <= GOAL_MS, `a hint of ${hint} ms`);
            // Waiting the hint is the client under test's behaviour (it follows Retry-After), not a wait for background work.
            hints.push(hint);
            await new Promise((resolve) => setTimeout(resolve, hint));
            waitedForHint = true;
            continue;
          }
          assert.ok([200, 201].includes(answer.status), `retry of ${request.key}: ${answer.status} ${JSON.stringify(answer.body)}`);
          waits.push(performance.now() - killedAt);
          answered.set(request.key, answer.body.agent_id);
          return;
        }
      }),
    );
    const longest = Math.max(...waits);
    t.diagnostic(
      `kills: ${kills}; requests answered before the last kill: ${KILL_AFTER}+; cut off: ${cutOff.length} (claims left in progress: ${strandedClaims}); ` +
        `hints given: ${hints.length} (${hints.length ? `${Math.min(...hints)}–${Math.max(...hints)} ms` : '-'}); ` +
        `refused again after waiting the hint: ${refusedAfterHint.length}; longest kill-to-answer: ${Math.round(longest)} ms (goal ${GOAL_MS} ms)`,
    );
    assert.deepEqual(refusedAfterHint, [], 'no retry made when the hint said was refused again');
    assert.ok(longest <= STUCK_MS, `a request cut off by the kill was answered only ${Math.round(longest)} ms after it: the takeover is stuck`);

    // Nothing ran twice: one agent, one registration event and one ledger leaf per request answered.
    const count = async (sql: string) => ((await client.query(`select count(*)::int as n from ${sql}`)).rows[0].n as number);
    const agents = await count(`"${schema}".agents`);
    const names = await count(`(select distinct record::jsonb->>'display_name' from "${schema}".agents) d`);
    const events = await count(`"${schema}".events where type = 'agent.registered'`);
    const leaves = await count(`"${schema}".ledger_leaves l join "${schema}".events e on e.seq = l.seq where e.type = 'agent.registered'`);
    t.diagnostic(`agents: ${agents}, distinct names: ${names}, registration events: ${events}, their ledger leaves: ${leaves}, requests answered: ${answered.size}`);
    assert.equal(agents, answered.size, 'one agent per answered request');
    assert.equal(names, agents, 'no request registered its agent twice');
    assert.equal(events, agents);
    assert.equal(leaves, agents);
    assert.equal(new Set(answered.values()).size, answered.size);
    // A replay of a taken-over request answers what the retry got.
    for (const request of cutOff.slice(0, 5)) {
      const replay = await post(survivor.url, request);
      assert.equal(replay.status, 200);
      assert.equal(replay.body.agent_id, answered.get(request.key));
    }
  });
});
