/**
 * Computer-use runs end to end: a real registry, the real console, Debian's Chromium, and a scripted
 * model server on loopback that speaks the Messages API (test/helpers/scripted-model.ts) and is reached
 * through `@anthropic-ai/sdk`. The script's clicks land where the test's own browser finds the links
 * and buttons on the same pages at the same size, so a run really navigates and really acts.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { describe, test, type TestContext } from 'node:test';
import type { Page } from 'playwright-core';
import { hashFromHex } from '../../../src/core/crypto/merkle.ts';
import { verifyInclusion, verifySignedTreeHead } from '../../../src/client/ledger-verifier.ts';
import { NEEDS_CHROMIUM, launchBrowser, openPage, startConsoleFor } from '../../console/console-harness.ts';
import { WAIT_TIMEOUT_MS, registerOverHttp, startRegistries, testScope, type ListeningRegistry, type Scope } from '../../helpers/listening.ts';
import { BACKENDS, ulidOf } from '../../helpers/registry.ts';
import { SCRIPTED_MODEL_KEY, startScriptedModel, type ModelTurn, type ModelRequest, type ScriptedModel } from '../../helpers/scripted-model.ts';
import { eventually } from '../../helpers/eventually.ts';

const ENDED = new Set(['completed', 'failed', 'canceled', 'max_turns_reached']);
const unhex = (hex: string) => hashFromHex(hex) as Uint8Array;

type Stack = { scope: Scope; registry: ListeningRegistry; consoleUrl: string; model: ScriptedModel };

async function startStack(t: TestContext, backend: (typeof BACKENDS)[number], script: Parameters<typeof startScriptedModel>[1], env: Record<string, string> = {}): Promise<Stack> {
  const scope = testScope(t);
  const model = await startScriptedModel(scope, script);
  const [registry] = await startRegistries(scope, backend, {
    env: { COMPUTER_USE_API_KEY: SCRIPTED_MODEL_KEY, COMPUTER_USE_MODEL_URL: model.url, ...env },
  });
  assert.ok(registry);
  const console = await startConsoleFor(scope, registry.baseUrl);
  registry.app.ward.computerUse.setConsoleOrigin(console.url);
  return { scope, registry, consoleUrl: console.url, model };
}

function api(stack: Stack, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  return fetch(`${stack.registry.baseUrl}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(method === 'POST' ? { 'x-idempotency-key': crypto.randomUUID() } : {}), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function startRun(stack: Stack, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<string> {
  const response = await api(stack, 'POST', '/v1/admin/computer-use/runs', body, headers);
  const answer = (await response.json()) as any;
  assert.equal(response.status, 202, JSON.stringify(answer));
  assert.equal(answer.status, 'queued');
  assert.equal(response.headers.get('location'), `/v1/admin/computer-use/runs/${answer.session_id}`);
  return answer.session_id;
}

async function getRun(stack: Stack, sessionId: string): Promise<any> {
  const response = await api(stack, 'GET', `/v1/admin/computer-use/runs/${sessionId}`);
  assert.equal(response.status, 200);
  return response.json();
}

async function waitForRun(stack: Stack, sessionId: string, until: (run: any) => boolean = (run) => ENDED.has(run.status)): Promise<any> {
  let last: any;
  return eventually(
    async () => {
      last = await getRun(stack, sessionId);
      return until(last) ? last : undefined;
    },
    () => `run ${sessionId} (still ${last?.status} after ${last?.turns_taken} turns)`,
    WAIT_TIMEOUT_MS,
    100,
  );
}

/** Where a click on `selector` lands on `path`, found in the test's own browser at the run's size and persona. */
async function centreOf(page: Page, url: string, selector: string): Promise<[number, number]> {
  if (page.url() !== url) await page.goto(url);
  const box = await page.locator(selector).first().boundingBox();
  assert.ok(box, `${selector} on ${url}`);
  return [Math.round(box.x + box.width / 2), Math.round(box.y + box.height / 2)];
}

async function testBrowserAs(t: TestContext, persona: string): Promise<Page> {
  const browser = await launchBrowser(t);
  const { page } = await openPage(browser, { width: 1280, height: 800 });
  await page.setExtraHTTPHeaders({ 'x-ward-persona': persona });
  return page;
}

/** The address the model was last shown in a request (after its last action). */
const address = (request: ModelRequest) => request.resultTexts.findLast((text) => text.startsWith('Address: '))?.slice('Address: '.length);

describe('computer use: runs', NEEDS_CHROMIUM, () => {
  for (const backend of BACKENDS) {
    test(`${backend}: a run looks, clicks through to an agent and reports; its turns, screenshots and ledger entries check out`, async (t) => {
      let consoleUrl = '';
      let agentPath = '';
      const seen: string[] = [];
      const page = await testBrowserAs(t, 'observer');
      const stack = await startStack(t, backend, async (index, request): Promise<ModelTurn> => {
        seen.push(address(request) ?? '');
        if (index === 0) return { text: 'Let me look first.', actions: [{ action: 'screenshot' }] };
        if (index === 1) return { actions: [{ action: 'left_click', coordinate: await centreOf(page, `${consoleUrl}/dashboard`, 'nav a[href="/agents"]') }] };
        if (index === 2) return { actions: [{ action: 'mouse_move', coordinate: [10, 10] }, { action: 'left_click', coordinate: await centreOf(page, `${consoleUrl}/agents`, `a[href="${agentPath}"]`) }] };
        return { final: 'Triage One is active and its trust is shown.' };
      });
      consoleUrl = stack.consoleUrl;
      const uri = await registerOverHttp(stack.registry.baseUrl, 'Triage One');
      agentPath = `/agents/${ulidOf(uri)}`;

      const sessionId = await startRun(stack, { task: 'Open the agent Triage One and say whether it is active.', max_turns: 5 });
      const run = await waitForRun(stack, sessionId);
      assert.deepEqual(stack.model.problems, []);
      assert.equal(run.status, 'completed', run.failure_reason);
      assert.equal(run.final_answer, 'Triage One is active and its trust is shown.');
      assert.equal(run.persona, 'observer');
      assert.equal(run.url, `${consoleUrl}/dashboard`);
      assert.equal(run.turns_taken, 3);
      assert.ok(run.started_at && run.ended_at && run.started_at <= run.ended_at);
      // What the model saw: the dashboard, the same page after its screenshot, the agents list, the agent.
      assert.deepEqual(seen, [`${consoleUrl}/dashboard`, `${consoleUrl}/dashboard`, `${consoleUrl}/agents`, `${consoleUrl}${agentPath}`]);
      assert.match(stack.model.requests[0]?.body.system ?? '', /observer/);
      assert.match(stack.model.requests[0]?.body.system ?? '', /read-only/);
      assert.equal(stack.model.requests[0]?.body.model, 'claude-sonnet-4-6');
      assert.equal(stack.model.requests[0]?.body.tools[0]?.type, 'computer_20251124');

      assert.deepEqual(run.turns.map((turn: any) => [turn.turn, turn.actions.map((action: any) => action.type)]), [
        [0, []],
        [1, ['screenshot']],
        [2, ['left_click']],
        [3, ['mouse_move', 'left_click']],
      ]);
      assert.equal(run.turns[1].model_text, 'Let me look first.');
      for (const turn of run.turns) {
        assert.ok(turn.screenshot_url, `turn ${turn.turn} screenshot`);
        const png = await api(stack, 'GET', turn.screenshot_url);
        assert.equal(png.status, 200);
        assert.equal(png.headers.get('content-type'), 'image/png');
        const bytes = Buffer.from(await png.arrayBuffer());
        assert.equal(createHash('sha256').update(bytes).digest('hex'), turn.screenshot_sha256, `turn ${turn.turn} digest`);
        if (turn.actions.length > 0) assert.equal(turn.actions.at(-1).screenshot_sha256, turn.screenshot_sha256);
      }
      const missing = await api(stack, 'GET', `/v1/admin/computer-use/runs/${sessionId}/screenshots/9`);
      assert.equal(missing.status, 404);
      assert.equal(((await missing.json()) as any).error.code, 'RUN_NOT_FOUND');

      // The ledger: requested, started, one entry per action, ended; each proven against a signed head.
      assert.deepEqual(
        run.ledger_entries.map((entry: any) => entry.type),
        ['computer_use.requested', 'computer_use.started', 'computer_use.action', 'computer_use.action', 'computer_use.action', 'computer_use.action', 'computer_use.ended'],
      );
      const jwks = (await (await api(stack, 'GET', '/.well-known/jwks.json')).json()) as any;
      const head = await verifySignedTreeHead(await (await api(stack, 'GET', '/v1/transparency/sth')).json(), jwks);
      for (const entry of run.ledger_entries) {
        const proof = (await (await api(stack, 'GET', `/v1/transparency/proof/inclusion?leaf_index=${entry.leaf_index}&tree_size=${head.treeSize}`)).json()) as any;
        assert.equal(proof.leaf_hash, entry.leaf_hash);
        assert.equal(verifyInclusion(unhex(entry.leaf_hash), entry.leaf_index, head.treeSize, proof.inclusion_path.map(unhex), head.rootHash), true, `leaf ${entry.leaf_index}`);
      }
      const leaves = (await (await api(stack, 'GET', `/v1/transparency/entries?start=${run.ledger_entries[0].leaf_index}&limit=20`)).json()) as any;
      const recorded = leaves.entries.map((entry: any) => JSON.parse(entry.leaf)).filter((leaf: any) => leaf.subject === sessionId);
      assert.deepEqual(recorded.map((leaf: any) => leaf.type), run.ledger_entries.map((entry: any) => entry.type));
      const actionLeaves = recorded.filter((leaf: any) => leaf.type === 'computer_use.action');
      assert.deepEqual(actionLeaves.map((leaf: any) => leaf.data.screenshot_sha256), run.turns.flatMap((turn: any) => turn.actions.map((action: any) => action.screenshot_sha256)));
      assert.equal(recorded[1].data.screenshot_sha256, run.turns[0].screenshot_sha256);
      assert.equal(recorded[0].data.task_sha256, createHash('sha256').update('Open the agent Triage One and say whether it is active.').digest('hex'));
      assert.ok(!JSON.stringify(recorded).includes('Triage One'), 'the ledger holds digests, not the task text');
      assert.equal(recorded.at(-1).data.status, 'completed');

      const list = (await (await api(stack, 'GET', '/v1/admin/computer-use/runs?limit=1')).json()) as any;
      assert.equal(list.runs[0].session_id, sessionId);
      assert.equal(list.runs[0].status, 'completed');

      // The operator's view: runs by status in /metrics.
      const metrics = await (await api(stack, 'GET', '/metrics')).text();
      assert.match(metrics, /^ward_computer_use_runs\{status="completed"[^}]*\} 1$/m);
      assert.match(metrics, /^ward_computer_use_runs\{status="running"[^}]*\} 0$/m);
    });
  }

  test('a run that keeps asking stops at max_turns; a malformed action is answered to the model as an error', async (t) => {
    const stack = await startStack(t, 'sqlite', (index) =>
      index === 0 ? { actions: [{ action: 'left_click', coordinate: [5000, 5] }] } : { actions: [{ action: 'scroll', coordinate: [640, 400], scroll_direction: 'down', scroll_amount: 2 }] },
    );
    const sessionId = await startRun(stack, { task: 'Scroll forever.', max_turns: 2, persona: 'auditor' });
    const run = await waitForRun(stack, sessionId);
    assert.equal(run.status, 'max_turns_reached');
    assert.equal(run.turns_taken, 2);
    assert.equal(stack.model.requests.length, 2);
    assert.deepEqual(stack.model.problems, []);
    assert.match(run.turns[1].actions[0].error, /outside the 1280×800 screen/);
    const second = stack.model.requests[1]?.body.messages.at(-1)?.content[0];
    assert.equal(second.is_error, true);
    assert.match(second.content[0].text, /outside the 1280×800 screen/);
    assert.match(stack.model.requests[0]?.body.system ?? '', /auditor/);
    assert.equal(run.ledger_entries.at(-1).type, 'computer_use.ended');
  });

  test('cancel stops a run mid-way; its replay answers again; a second cancel is 409; an unknown run is 404', async (t) => {
    // One run at a time, so a later run starting shows this one's worker has let go of its place.
    const stack = await startStack(t, 'sqlite', (index) => (index === 0 ? { actions: [{ action: 'screenshot' }] } : { hold: true }), { COMPUTER_USE_MAX_RUNS: '1' });
    const sessionId = await startRun(stack, { task: 'Look, then wait.', max_turns: 10 });
    await stack.model.waitForRequests(2);
    const running = await waitForRun(stack, sessionId, (run) => run.turns_taken === 1);
    assert.equal(running.status, 'running');

    const cancelKey = crypto.randomUUID();
    const cancel = await api(stack, 'POST', `/v1/admin/computer-use/runs/${sessionId}/cancel`, undefined, { 'x-idempotency-key': cancelKey });
    assert.equal(cancel.status, 200);
    const canceled = (await cancel.json()) as any;
    assert.equal(canceled.status, 'canceled');
    assert.ok(canceled.ended_at);
    assert.equal(canceled.ledger_entries.at(-1).type, 'computer_use.ended');
    // The model call in flight was abandoned, and nothing more happens: the next run starts only once
    // this one's worker has stopped, and its first model call is the only one after the two of this run.
    await eventually(() => (stack.model.abandoned() === 1 ? true : undefined), 'the model call in flight to be abandoned');
    await startRun(stack, { task: 'Wait after the cancel.', max_turns: 10 });
    await stack.model.waitForRequests(3);
    const after = await getRun(stack, sessionId);
    assert.equal(after.status, 'canceled');
    assert.equal(after.turns_taken, 1);
    assert.equal(stack.model.requests.length, 3);
    assert.match(JSON.stringify(stack.model.requests[2]?.body.messages), /Wait after the cancel\./, 'the third model call is the next run\'s');

    // A retry of the same cancel (same key) is its replay, not a refusal.
    const replayed = await api(stack, 'POST', `/v1/admin/computer-use/runs/${sessionId}/cancel`, undefined, { 'x-idempotency-key': cancelKey });
    assert.equal(replayed.status, 200);
    assert.equal(replayed.headers.get('idempotent-replayed'), 'true');
    assert.equal(((await replayed.json()) as any).status, 'canceled');

    const again = await api(stack, 'POST', `/v1/admin/computer-use/runs/${sessionId}/cancel`);
    assert.equal(again.status, 409);
    const refusal = (await again.json()) as any;
    assert.equal(refusal.error.code, 'INVALID_STATE_TRANSITION');
    assert.equal(refusal.error.details.status, 'canceled');

    const unknown = await api(stack, 'POST', '/v1/admin/computer-use/runs/01JAAAAAAAAAAAAAAAAAAAAAAA/cancel');
    assert.equal(unknown.status, 404);
    assert.equal(((await unknown.json()) as any).error.code, 'RUN_NOT_FOUND');
  });

  test("a run whose credential is revoked while it waits fails at the console's sign-in, saying so", async (t) => {
    const scope = testScope(t);
    const model = await startScriptedModel(scope, () => ({ hold: true }));
    const [registry] = await startRegistries(scope, 'sqlite', { env: { COMPUTER_USE_API_KEY: SCRIPTED_MODEL_KEY, COMPUTER_USE_MODEL_URL: model.url, COMPUTER_USE_MAX_RUNS: '1' } });
    assert.ok(registry);
    const console = await startConsoleFor(scope, registry.baseUrl, { REGISTRY_AUTH_MODE: 'jwt' });
    registry.app.ward.computerUse.setConsoleOrigin(console.url);
    const stack: Stack = { scope, registry, consoleUrl: console.url, model };
    const created = await api(stack, 'POST', '/v1/admin/billing/api-keys', { org_id: 'org-ops', display_name: 'admin', scopes: ['registry:read', 'registry:admin'] });
    const admin = (await created.json()) as any;
    const asAdmin = { 'x-api-key': admin.raw_key };

    // The first run holds the only slot (its model call never answers); the second waits its turn.
    const first = await startRun(stack, { task: 'Hold the slot.' }, asAdmin);
    await model.waitForRequests(1);
    const second = await startRun(stack, { task: 'Wait, then look.' }, asAdmin);
    assert.equal((await getRun(stack, second)).status, 'queued');
    assert.equal((await api(stack, 'DELETE', `/v1/admin/billing/api-keys/${admin.key_id}`)).status, 204);
    assert.equal((await api(stack, 'POST', `/v1/admin/computer-use/runs/${first}/cancel`)).status, 200);

    const run = await waitForRun(stack, second);
    assert.equal(run.status, 'failed');
    assert.equal(run.failure_reason, 'the credential that asked for the run was revoked or has expired');
    assert.equal(run.turns.length, 0, 'nothing was seen or done');
    assert.equal(model.requests.length, 1, 'the model was never asked for it');
  });

  test('a model that answers 500 fails the run with the reason; one that does not answer in time too', async (t) => {
    const stack = await startStack(t, 'sqlite', [{ status: 500, message: 'scripted failure' }, { status: 500, message: 'scripted failure' }, { status: 500, message: 'scripted failure' }]);
    const sessionId = await startRun(stack, { task: 'Anything.' });
    const run = await waitForRun(stack, sessionId);
    assert.equal(run.status, 'failed');
    assert.equal(run.failure_reason, 'the model answered 500: scripted failure');
    assert.equal(run.turns_taken, 0);
    assert.equal(run.ledger_entries.at(-1).type, 'computer_use.ended');

    // The client library retries a timed-out call twice; every attempt is held here.
    const slow = await startStack(t, 'sqlite', () => ({ hold: true }), { COMPUTER_USE_MODEL_TIMEOUT_SECONDS: '1' });
    const slowRun = await waitForRun(slow, await startRun(slow, { task: 'Anything.' }));
    assert.equal(slowRun.status, 'failed');
    assert.match(slowRun.failure_reason, /did not answer within 1 s/);
    assert.equal(slow.model.requests.length, 3);
  });

  test('an operator run suspends an agent; an observer run told the same is refused by the console', async (t) => {
    for (const persona of ['operator', 'observer'] as const) {
      let consoleUrl = '';
      let agentPath = '';
      const page = await testBrowserAs(t, persona);
      const stack = await startStack(t, 'sqlite', async (index): Promise<ModelTurn> => {
        if (index === 0) return { actions: [{ action: 'left_click', coordinate: await centreOf(page, `${consoleUrl}${agentPath}`, `a[href="${agentPath}/suspend"]`) }] };
        if (index === 1) {
          const reason = await centreOf(page, `${consoleUrl}${agentPath}/suspend`, '#reason');
          return { actions: [{ action: 'left_click', coordinate: reason }, { action: 'type', text: 'Failing clinical safety review' }] };
        }
        if (index === 2) return { actions: [{ action: 'left_click', coordinate: await centreOf(page, `${consoleUrl}${agentPath}/suspend`, 'form button[type="submit"]') }] };
        return { final: 'Done.' };
      });
      consoleUrl = stack.consoleUrl;
      const uri = await registerOverHttp(stack.registry.baseUrl, 'Triage Two');
      agentPath = `/agents/${ulidOf(uri)}`;
      const sessionId = await startRun(stack, { task: 'Suspend Triage Two: it failed its clinical safety review.', url: `${consoleUrl}${agentPath}`, persona });
      const run = await waitForRun(stack, sessionId);
      assert.equal(run.status, 'completed', run.failure_reason);
      assert.deepEqual(stack.model.problems, []);
      assert.equal(run.turns[2].actions[1].text, 'Failing clinical safety review');
      const agent = (await (await api(stack, 'GET', `/v1/agents/${encodeURIComponent(uri)}`)).json()) as any;
      const landed = address(stack.model.requests[3] as ModelRequest);
      if (persona === 'operator') {
        assert.equal(agent.status, 'suspended', 'the operator suspended it');
        assert.equal(landed, `${consoleUrl}${agentPath}`);
      } else {
        assert.equal(agent.status, 'active', 'the observer could not');
        assert.equal(landed, `${consoleUrl}${agentPath}/suspend`);
      }
    }
  });

  test('a page that reaches for another origin gets nothing; addresses outside the allowed origins are refused', async (t) => {
    let hits = 0;
    const elsewhere = createServer((_req, res) => {
      hits += 1;
      res.end('secret');
    });
    const page = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><title>Reach</title><p id="out">waiting</p><img src="${origin(elsewhere)}/pixel.png"><script>fetch('${origin(elsewhere)}/metadata').then(() => document.getElementById('out').textContent = 'reached', () => document.getElementById('out').textContent = 'blocked')</script>`);
    });
    for (const server of [elsewhere, page]) await listen(t, server);
    const stack = await startStack(t, 'sqlite', [{ actions: [{ action: 'wait', duration: 0.3 }] }, { final: 'The page could not reach the other site.' }], {
      COMPUTER_USE_ALLOWED_ORIGINS: `${origin(page)}`,
    });
    const run = await waitForRun(stack, await startRun(stack, { task: 'Open the page.', url: `${origin(page)}/reach` }));
    assert.equal(run.status, 'completed', run.failure_reason);
    assert.equal(hits, 0, 'nothing reached the other origin');

    const refused = await api(stack, 'POST', '/v1/admin/computer-use/runs', { task: 'Go there.', url: 'http://169.254.169.254/latest/meta-data' });
    assert.equal(refused.status, 422);
    const envelope = (await refused.json()) as any;
    assert.equal(envelope.error.code, 'URL_NOT_ALLOWED');
    assert.equal(envelope.error.details.pointer, '/url');
  });

  test('bad requests: validation, idempotency, PHI, no display, missing browser and model', async (t) => {
    const stack = await startStack(t, 'sqlite', []);
    const cases: [Record<string, unknown>, string][] = [
      [{}, '/task'],
      [{ task: 'x', max_turns: 0 }, '/max_turns'],
      [{ task: 'x', max_turns: 51 }, '/max_turns'],
      [{ task: 'x', persona: 'admin' }, '/persona'],
      [{ task: 'x', url: 'file:///etc/passwd' }, '/url'],
      [{ task: 'x', extra: true }, '/extra'],
    ];
    for (const [body, pointer] of cases) {
      const response = await api(stack, 'POST', '/v1/admin/computer-use/runs', body);
      assert.equal(response.status, 422, JSON.stringify(body));
      const envelope = (await response.json()) as any;
      assert.equal(envelope.error.code, 'VALIDATION_ERROR');
      assert.ok(JSON.stringify(envelope.error.details).includes(pointer), `${pointer} in ${JSON.stringify(envelope.error.details)}`);
    }
    const noKey = await fetch(`${stack.registry.baseUrl}/v1/admin/computer-use/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ task: 'x' }) });
    assert.equal(noKey.status, 400);
    assert.equal(((await noKey.json()) as any).error.code, 'IDEMPOTENCY_KEY_REQUIRED');

    const phi = await api(stack, 'POST', '/v1/admin/computer-use/runs', { task: 'Find the record of patient NHS number 943 476 5919' });
    assert.equal(phi.status, 422);
    assert.equal(((await phi.json()) as any).error.code, 'PHI_DETECTED');

    const headed = await api(stack, 'POST', '/v1/admin/computer-use/runs', { task: 'x', headless: false });
    if (!process.env.DISPLAY) {
      assert.equal(headed.status, 422);
      const envelope = (await headed.json()) as any;
      assert.equal(envelope.error.code, 'VALIDATION_ERROR');
      assert.match(envelope.error.message, /needs a display/);
    }

    // The same key twice makes one run.
    const key = crypto.randomUUID();
    const first = await api(stack, 'POST', '/v1/admin/computer-use/runs', { task: 'Say hello.' }, { 'x-idempotency-key': key });
    const replay = await api(stack, 'POST', '/v1/admin/computer-use/runs', { task: 'Say hello.' }, { 'x-idempotency-key': key });
    assert.equal(first.status, 202);
    assert.equal(replay.status, 200);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(((await replay.json()) as any).session_id, ((await first.json()) as any).session_id);
    const listed = (await (await api(stack, 'GET', '/v1/admin/computer-use/runs')).json()) as any;
    assert.equal(listed.runs.length, 1);
    const badCursor = await api(stack, 'GET', '/v1/admin/computer-use/runs?cursor=bm9wZTox');
    assert.equal(badCursor.status, 422);

    const bare = testScope(t);
    const [unequipped] = await startRegistries(bare, 'sqlite', { env: { CHROMIUM_PATH: '/nonexistent/chromium' } });
    assert.ok(unequipped);
    const unavailable = await fetch(`${unequipped.baseUrl}/v1/admin/computer-use/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-idempotency-key': crypto.randomUUID() },
      body: JSON.stringify({ task: 'x' }),
    });
    assert.equal(unavailable.status, 503);
    const envelope = (await unavailable.json()) as any;
    assert.equal(envelope.error.code, 'DEPENDENCY_UNAVAILABLE');
    assert.deepEqual(envelope.error.details.missing, ['browser', 'model']);
    assert.match(envelope.error.details.hint, /apt-get install chromium/);
    assert.match(envelope.error.details.hint, /COMPUTER_USE_API_KEY/);
  });

  test('health data on a page or in what the model says is not stored; the digests still are', async (t) => {
    const page = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>Chart</title><p>Patient NHS number 943 476 5919, seen today.</p>');
    });
    await listen(t, page);
    const stack = await startStack(t, 'sqlite', [{ text: 'I see NHS number 943 476 5919.', actions: [{ action: 'type', text: 'MRN: 12345678' }] }, { final: 'The patient with NHS number 943 476 5919 is listed.' }], {
      COMPUTER_USE_ALLOWED_ORIGINS: origin(page),
    });
    const run = await waitForRun(stack, await startRun(stack, { task: 'Read the page.', url: `${origin(page)}/chart` }));
    assert.equal(run.status, 'completed', run.failure_reason);
    assert.match(run.final_answer, /^\[withheld by the PHI guard: /);
    assert.match(run.turns[1].model_text, /^\[withheld by the PHI guard: /);
    assert.match(run.turns[1].actions[0].text, /^\[withheld by the PHI guard: /);
    assert.match(run.turns[1].actions[0].text_sha256, /^[0-9a-f]{64}$/);
    assert.equal(run.turns[0].screenshot_url, null);
    assert.match(run.turns[0].screenshot_sha256, /^[0-9a-f]{64}$/);
    const withheld = await api(stack, 'GET', `/v1/admin/computer-use/runs/${run.session_id}/screenshots/0`);
    assert.equal(withheld.status, 404);
    assert.equal(((await withheld.json()) as any).error.details.withheld, 'phi');
    const stored = JSON.stringify(await getRun(stack, run.session_id));
    assert.ok(!stored.includes('943 476 5919') && !stored.includes('12345678'), 'no PHI in the stored run');
  });
});

function origin(server: Server): string {
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

async function listen(t: TestContext, server: Server): Promise<void> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  }));
}
