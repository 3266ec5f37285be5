import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { hashLeaf, merkleRoot, toHex } from '../../src/core/crypto/merkle.ts';
import { isLedgerEventType } from '../../src/core/ledger-entry.ts';
import { openStorage, type Backend, type StorageOptions } from '../../src/registry/storage/database.ts';
import { BACKENDS, agentBody, openTestStorage, ulidOf } from '../helpers/registry.ts';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const WARD_CLI = join(REPO_ROOT, 'src', 'cli', 'ward.ts');

/** Safety nets only: they turn a hang into a failure, they assert nothing about speed. */
const LISTEN_TIMEOUT_MS = 20_000;
const REQUEST_TIMEOUT_MS = 15_000;

/**
 * Kill cycles per backend: one per kill point in CI; `npm run crash` runs 50 (CRASH_CYCLES), the
 * points taken in turn, each cycle on the database the previous crash left behind.
 */
const CYCLES = Number(process.env.CRASH_CYCLES ?? 4);

/** Acknowledged writes to wait for before pulling the plug. */
const KILL_AFTER_ACKS = 50;
const WORKERS = 8;

type RunningRegistry = {
  child: ChildProcess;
  baseUrl: string;
  exited: Promise<void>;
};

/**
 * Starts `ward registry` as a real child process on the given database and resolves once it logs
 * "registry listening". The child is SIGKILLed when the test ends if it is still alive.
 */
async function startRegistryProcess(
  t: TestContext,
  storageEnv: Record<string, string>,
): Promise<RunningRegistry> {
  const child = spawn(process.execPath, [WARD_CLI, 'registry'], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      REGISTRY_PORT: '0',
      REGISTRY_LOG_LEVEL: 'info',
      REGISTRY_ENV: 'test',
      ...storageEnv,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });

  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    if (stderr.length < 64_000) stderr += chunk;
  });

  // Every stdout line is read for as long as the child lives, so its log writes never block on a
  // full pipe during the burst.
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const fail = (reason: string) => {
      clearTimeout(timer);
      reject(new Error(`${reason}\n--- child stderr ---\n${stderr}`));
    };
    const timer = setTimeout(
      () => fail(`the registry did not log "registry listening" within ${LISTEN_TIMEOUT_MS} ms`),
      LISTEN_TIMEOUT_MS,
    );
    child.once('error', (error) => fail(`the registry could not be spawned: ${error.message}`));
    child.once('exit', (code, signal) =>
      fail(`the registry exited before listening (code ${code}, signal ${signal})`),
    );
    createInterface({ input: child.stdout! }).on('line', (line) => {
      let entry: { msg?: unknown; url?: unknown };
      try {
        entry = JSON.parse(line) as typeof entry;
      } catch {
        return;
      }
      if (entry.msg === 'registry listening' && typeof entry.url === 'string') {
        const port = Number(new URL(entry.url).port);
        if (!Number.isInteger(port) || port <= 0) return fail(`could not read a port from ${line}`);
        clearTimeout(timer);
        resolve(`http://127.0.0.1:${port}`);
      }
    });
  });
  return { child, baseUrl, exited };
}

type Sent = { key: string; body: Record<string, unknown>; displayName: string };
type Acknowledged = Sent & { agentId: string };

type BurstOutcome = {
  acknowledged: Acknowledged[];
  /** Requests the kill cut off: sent, never answered. They may or may not have committed. */
  cutOff: Sent[];
  /** Responses that arrived but were not 201: none are expected from a healthy server. */
  unexpected: { status: number; text: string }[];
  /** Requests still awaiting their response when SIGKILL was sent. */
  inFlightAtKill: number;
};

/**
 * When SIGKILL is sent once enough writes are acknowledged. The burst goes on until the signal is
 * sent, so each point catches the server at a different stage of its in-flight writes (before
 * the claim, mid-transaction, committed but not yet answered). Delays only vary the crash point.
 */
const KILL_POINTS: { name: string; schedule: (kill: () => void) => void }[] = [
  { name: 'as the acknowledgement arrives', schedule: (kill) => kill() },
  { name: 'on the next turn of the event loop', schedule: (kill) => setImmediate(kill) },
  { name: 'about 1 ms later', schedule: (kill) => setTimeout(kill, 1) },
  { name: 'about 3 ms later', schedule: (kill) => setTimeout(kill, 3) },
];

/**
 * Fires registrations from concurrent workers, each with its own idempotency key, and SIGKILLs the
 * child at the given point once enough of them have been acknowledged, while the other workers'
 * requests are still in flight. Errors after the kill (reset or refused connections) are expected.
 */
async function burstThenKill(
  registry: RunningRegistry,
  namePrefix: string,
  schedule: (kill: () => void) => void,
): Promise<BurstOutcome> {
  const acknowledged: Acknowledged[] = [];
  const cutOff: Sent[] = [];
  const unexpected: { status: number; text: string }[] = [];
  let scheduled = false;
  let killed = false;
  let inFlight = 0;
  let inFlightAtKill = -1;

  const kill = () => {
    if (killed) return;
    killed = true;
    inFlightAtKill = inFlight;
    registry.child.kill('SIGKILL');
  };

  async function worker(workerIndex: number): Promise<void> {
    for (let i = 0; !killed; i += 1) {
      const key = randomUUID();
      const displayName = `${namePrefix} w${workerIndex} n${i}`;
      const body = agentBody({ display_name: displayName });
      inFlight += 1;
      let response: Response;
      try {
        response = await postRegistration(registry.baseUrl, { key, body });
      } catch (error) {
        if (!killed) throw error;
        cutOff.push({ key, body, displayName }); // the server is gone: expected
        return;
      } finally {
        inFlight -= 1;
      }
      let text: string;
      try {
        text = await response.text();
      } catch (error) {
        if (!killed) throw error;
        cutOff.push({ key, body, displayName });
        return;
      }
      if (response.status !== 201) {
        unexpected.push({ status: response.status, text });
        kill(); // stop the burst; the assertion on `unexpected` reports it
        return;
      }
      const record = JSON.parse(text) as { agent_id: string };
      acknowledged.push({ key, body, displayName, agentId: record.agent_id });
      if (acknowledged.length >= KILL_AFTER_ACKS && !scheduled) {
        scheduled = true;
        schedule(kill);
      }
    }
  }

  const workers = Array.from({ length: WORKERS }, (_, index) => worker(index));
  // If the child died on its own the burst would end in fetch errors; stop it and let the
  // assertion on the exit signal report it.
  void registry.exited.then(() => {
    if (!killed) kill();
  });
  await Promise.all(workers);
  await registry.exited;
  return { acknowledged, cutOff, unexpected, inFlightAtKill };
}

function postRegistration(
  baseUrl: string,
  request: { key: string; body: Record<string, unknown> },
): Promise<Response> {
  return fetch(`${baseUrl}/v1/agents`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-idempotency-key': request.key },
    body: JSON.stringify(request.body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
}

async function getJson(url: string): Promise<{ status: number; headers: Headers; body: any }> {
  const response = await fetch(url, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

async function listAllAgents(baseUrl: string): Promise<{ agents: any[]; totalCount: number }> {
  const agents: any[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 1000; page += 1) {
    const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const { status, body } = await getJson(`${baseUrl}/v1/agents?limit=100${query}`);
    assert.equal(status, 200, `listing failed: ${JSON.stringify(body)}`);
    agents.push(...body.agents);
    cursor = body.next_cursor;
    if (!cursor) return { agents, totalCount: body.total_count };
  }
  throw new Error('the listing never ended (1000 pages)');
}

function storageOptionsFor(backend: Backend, env: Record<string, string>): StorageOptions {
  if (backend === 'sqlite')
    return { backend: 'sqlite', path: join(env.REGISTRY_DATA_DIR as string, 'registry.sqlite') };
  return {
    backend: 'postgres',
    url: env.DATABASE_URL as string,
    schema: env.DATABASE_SCHEMA as string,
    poolSize: 2,
  };
}

describe('crash safety of the registry process', () => {
  for (const backend of BACKENDS) {
    test(
      `[${backend}] killing the server with SIGKILL in the middle of a burst of registrations loses no acknowledged write and leaves no half-written record`,
      { timeout: 180_000 + CYCLES * 15_000 },
      async (t) => {
        const { env: storageEnv } = await openTestStorage(t, backend);
        const runId = randomUUID().slice(0, 8);

        // 1. Bursts against real server processes, each SIGKILLed mid-flight; every round starts on
        //    the database the previous crash left behind.
        const acknowledged: Acknowledged[] = [];
        const cutOff: Sent[] = [];
        for (let round = 0; round < CYCLES; round += 1) {
          const point = KILL_POINTS[round % KILL_POINTS.length] as (typeof KILL_POINTS)[number];
          const server = await startRegistryProcess(t, storageEnv);
          const burst = await burstThenKill(server, `Crash burst ${runId} r${round}`, point.schedule);
          assert.deepEqual(burst.unexpected, [], `round ${round}: every response before the kill was a 201`);
          assert.equal(server.child.signalCode, 'SIGKILL', `round ${round}: the server died of SIGKILL`);
          assert.ok(
            burst.acknowledged.length >= KILL_AFTER_ACKS,
            `round ${round}: only ${burst.acknowledged.length} writes acknowledged`,
          );
          assert.ok(
            burst.inFlightAtKill > 0,
            `round ${round}: requests were still in flight when the server was killed`,
          );
          t.diagnostic(
            `round ${round} (kill ${point.name}): ${burst.acknowledged.length} acknowledged, ${burst.inFlightAtKill} in flight at the kill`,
          );
          acknowledged.push(...burst.acknowledged);
          cutOff.push(...burst.cutOff);
        }

        // 2. A fresh server on the same database.
        const restarted = await startRegistryProcess(t, storageEnv);

        // Every acknowledged write is there, exactly as acknowledged.
        for (const ack of acknowledged) {
          const { status, body } = await getJson(`${restarted.baseUrl}/v1/agents/${ulidOf(ack.agentId)}`);
          assert.equal(status, 200, `acknowledged agent ${ack.agentId} is missing after the crash`);
          assert.equal(body.agent_id, ack.agentId);
          assert.equal(body.display_name, ack.displayName);
          assert.equal(body.version, 1);
        }

        // Every record is complete, and the listing agrees with itself.
        const { agents, totalCount } = await listAllAgents(restarted.baseUrl);
        const listedIds = new Set(agents.map((agent) => agent.agent_id as string));
        assert.equal(listedIds.size, agents.length, 'no agent is listed twice');
        assert.equal(totalCount, agents.length, 'total_count equals the number of agents listed');
        for (const agent of agents) {
          assert.equal(typeof agent.agent_id, 'string', `record without agent_id: ${JSON.stringify(agent)}`);
          assert.ok(
            Array.isArray(agent.endpoints) && agent.endpoints.length > 0,
            `record without endpoints: ${agent.agent_id}`,
          );
          assert.equal(
            agent.trust_validation?.state,
            'validated',
            `record ${agent.agent_id} trust_validation`,
          );
          assert.equal(agent.version, 1, `record ${agent.agent_id} version`);
          assert.equal(agent.status, 'active', `record ${agent.agent_id} status`);
          assert.match(agent.display_name, new RegExp(`^Crash burst ${runId} r\\d+ w\\d+ n\\d+$`));
        }
        for (const ack of acknowledged)
          assert.ok(listedIds.has(ack.agentId), `acknowledged ${ack.agentId} is not listed`);
        // Unacknowledged requests may or may not have committed; none may have committed twice.
        assert.equal(
          new Set(agents.map((agent) => agent.display_name as string)).size,
          agents.length,
          'no request registered twice',
        );
        t.diagnostic(
          `${agents.length} agents after restart (${agents.length - acknowledged.length} committed but unacknowledged)`,
        );

        let strandedClaims: number;

        // The event log matches the records: one agent.registered per record, sequence without gaps.
        const storage = await openStorage(storageOptionsFor(backend, storageEnv));
        try {
          const events = await storage.db
            .selectFrom('events')
            .select(['seq', 'type', 'subject'])
            .orderBy('seq', 'asc')
            .execute();
          const seqs = events.map((event) => Number(event.seq));
          assert.deepEqual(
            seqs,
            Array.from({ length: seqs.length }, (_, index) => index + 1),
            'event seq numbers are 1..N without gaps',
          );
          const sequenceRow = await storage.db
            .selectFrom('event_sequence')
            .select('last_seq')
            .where('id', '=', 1)
            .executeTakeFirstOrThrow();
          assert.equal(
            Number(sequenceRow.last_seq),
            seqs.length,
            'event_sequence.last_seq equals the last event written',
          );

          const registered = events
            .filter((event) => event.type === 'agent.registered')
            .map((event) => event.subject);
          assert.equal(
            new Set(registered).size,
            registered.length,
            'no agent.registered event is duplicated',
          );
          assert.deepEqual(
            [...registered].sort(),
            [...listedIds].sort(),
            'agent.registered events and records match one to one',
          );

          // The transparency ledger went down with them: one leaf per ledgered event, in order, and
          // the signed root is the root of those leaves.
          const leaves = await storage.db.selectFrom('ledger_leaves').select(['seq', 'entry']).orderBy('leaf_index').execute();
          assert.deepEqual(
            leaves.map((leaf) => Number(leaf.seq)),
            events.filter((event) => isLedgerEventType(event.type)).map((event) => Number(event.seq)),
            'one ledger leaf per ledgered event, in sequence order',
          );
          const sth = (await getJson(`${restarted.baseUrl}/v1/transparency/sth`)).body;
          const leafHashes = leaves.map((leaf) => hashLeaf(new TextEncoder().encode(leaf.entry)));
          assert.equal(sth.root_hash, toHex(merkleRoot(leafHashes)), 'the signed root is the root of the leaves');

          const rows = await storage.db
            .selectFrom('agents')
            .select(['agent_uri', 'record', 'version', 'status'])
            .execute();
          assert.equal(rows.length, agents.length, 'the agents table holds exactly the listed records');
          for (const row of rows) {
            assert.doesNotThrow(
              () => JSON.parse(row.record),
              `stored record of ${row.agent_uri} is not valid JSON`,
            );
          }

          // Every request carried a key: each committed record has exactly one completed claim whose
          // stored response names it, and no completed claim names a record that is not there.
          const claims = await storage.db
            .selectFrom('idempotency_keys')
            .select(['state', 'response_body'])
            .execute();
          const completed = claims.filter((claim) => claim.state === 'completed');
          const answeredIds = completed.map(
            (claim) => (JSON.parse(claim.response_body ?? 'null') as { agent_id?: string } | null)?.agent_id,
          );
          assert.deepEqual(
            [...answeredIds].sort(),
            [...listedIds].sort(),
            'stored responses and records match one to one',
          );
          strandedClaims = claims.length - completed.length;
          t.diagnostic(
            `${strandedClaims} idempotency claim(s) left in progress by requests cut off by the kill`,
          );
        } finally {
          await storage.close();
        }

        // The stored responses survived too: replaying an acknowledged request returns it unchanged.
        for (const ack of acknowledged) {
          const response = await postRegistration(restarted.baseUrl, ack);
          const body = (await response.json()) as { agent_id?: string };
          assert.equal(response.status, 200, `replay of ${ack.key}: ${JSON.stringify(body)}`);
          assert.equal(response.headers.get('idempotent-replayed'), 'true');
          assert.equal(body.agent_id, ack.agentId);
        }
        const afterReplays = await listAllAgents(restarted.baseUrl);
        assert.equal(afterReplays.agents.length, agents.length, 'replays registered nothing new');

        // A client retrying a request the crash cut off never registers the agent twice: a committed
        // one is replayed, an uncommitted one runs now, and a claim the crash stranded answers
        // IDEMPOTENCY_KEY_IN_PROGRESS until its lock lapses (contract §2).
        const listedNames = new Set(agents.map((agent) => agent.display_name as string));
        const retryOutcomes: Record<string, number> = {};
        for (const request of cutOff) {
          const response = await postRegistration(restarted.baseUrl, request);
          const body = (await response.json()) as { display_name?: string; error?: { code?: string } };
          const committed = listedNames.has(request.displayName);
          const outcome =
            response.status === 409
              ? `409 ${body.error?.code}`
              : `${response.status}${response.headers.get('idempotent-replayed') ? ' replayed' : ''}`;
          retryOutcomes[outcome] = (retryOutcomes[outcome] ?? 0) + 1;
          if (committed) {
            assert.equal(
              outcome,
              '200 replayed',
              `retry of committed ${request.displayName}: ${JSON.stringify(body)}`,
            );
          } else {
            assert.ok(
              ['201', '409 IDEMPOTENCY_KEY_IN_PROGRESS'].includes(outcome),
              `retry of uncommitted ${request.displayName}: ${outcome}`,
            );
          }
          if (response.status !== 409) assert.equal(body.display_name, request.displayName);
        }
        const afterRetries = await listAllAgents(restarted.baseUrl);
        const names = afterRetries.agents.map((agent) => agent.display_name as string);
        assert.equal(new Set(names).size, names.length, 'no retried request registered a second agent');
        assert.equal(afterRetries.totalCount, names.length);
        // (A stranded claim whose lock has lapsed by now is taken over and answers 201 instead.)
        assert.ok(
          (retryOutcomes['409 IDEMPOTENCY_KEY_IN_PROGRESS'] ?? 0) <= strandedClaims,
          'only stranded claims answer in progress',
        );
        t.diagnostic(`retries of ${cutOff.length} cut-off requests: ${JSON.stringify(retryOutcomes)}`);
      },
    );
  }
});
