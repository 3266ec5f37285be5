/**
 * The demonstration model end to end, offline: `ward computer-use demo-model` as a real child process,
 * a real registry pointed at it through COMPUTER_USE_MODEL_URL (the registry still calls it with
 * `@anthropic-ai/sdk`), the real console, Debian's Chromium. A run opens a page by its name in the
 * navigation, takes a screenshot, reports what it sees, and is labelled a demonstration; a registry
 * asking another model name is refused by it, and a task it does not follow is answered with the
 * patterns it does.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, test, type TestContext } from 'node:test';
import { DEMONSTRATION_MODEL, planDemonstration, startDemonstrationModel } from '../../src/computer-use/demo-model.ts';
import { CHROMIUM, NEEDS_CHROMIUM, startConsoleFor } from '../console/console-harness.ts';
import { WAIT_TIMEOUT_MS, registerOverHttp, startRegistries, testScope, type ListeningRegistry } from '../helpers/listening.ts';
import { BACKENDS } from '../helpers/registry.ts';
import { eventually } from '../helpers/eventually.ts';
import { REPO_ROOT, WARD_CLI, cleanEnv } from '../helpers/ward-process.ts';

const ENDED = new Set(['completed', 'failed', 'canceled', 'max_turns_reached']);

/** Starts `ward computer-use demo-model` on a free port and resolves with the URL it prints. */
async function startDemoModel(t: TestContext): Promise<string> {
  const child = spawn(process.execPath, [WARD_CLI, 'computer-use', 'demo-model'], {
    cwd: REPO_ROOT,
    env: { ...cleanEnv(), COMPUTER_USE_DEMO_MODEL_PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      assert.equal(await exited, 0, 'the demonstration model stops cleanly on SIGTERM');
    }
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (chunk: Buffer) => void (err += chunk.toString()));
  return new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const url = /demonstration model listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
      if (url) resolve(url);
    });
    void exited.then((code) => reject(new Error(`the demonstration model exited (${code}): ${err}`)));
  });
}

async function startStack(t: TestContext, backend: (typeof BACKENDS)[number], modelName = DEMONSTRATION_MODEL, consoleEnv: Record<string, string> = {}) {
  const modelUrl = await startDemoModel(t);
  const scope = testScope(t);
  const [registry] = await startRegistries(scope, backend, {
    env: { COMPUTER_USE_MODEL_URL: modelUrl, COMPUTER_USE_API_KEY: 'demo', COMPUTER_USE_MODEL: modelName },
  });
  assert.ok(registry);
  const console = await startConsoleFor(scope, registry.baseUrl, consoleEnv);
  registry.app.ward.computerUse.setConsoleOrigin(console.url);
  return { registry, consoleUrl: console.url };
}

async function runTask(registry: ListeningRegistry, task: string): Promise<any> {
  const created = await fetch(`${registry.baseUrl}/v1/admin/computer-use/runs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-idempotency-key': crypto.randomUUID() },
    body: JSON.stringify({ task, max_turns: 6 }),
  });
  const accepted = (await created.json()) as { session_id: string };
  assert.equal(created.status, 202, JSON.stringify(accepted));
  let status = 'queued';
  return eventually(
    async () => {
      const run = (await (await fetch(`${registry.baseUrl}/v1/admin/computer-use/runs/${accepted.session_id}`)).json()) as any;
      status = run.status;
      return ENDED.has(run.status) ? run : undefined;
    },
    () => `run ${accepted.session_id} to end (still ${status})`,
    WAIT_TIMEOUT_MS,
    200,
  );
}

test('the demonstration model plans the task patterns it follows, one step a turn, ending with a report', () => {
  assert.deepEqual(planDemonstration('Open the Agents page, take a screenshot and report what you see.'), [
    { kind: 'click', name: 'Agents', page: true },
    { kind: 'screenshot' },
    { kind: 'report' },
  ]);
  assert.deepEqual(planDemonstration('Go to the "Trust" page then click Rotate the signing key'), [
    { kind: 'click', name: 'Trust', page: true },
    { kind: 'click', name: 'Rotate the signing key', page: false },
    { kind: 'report' },
  ]);
  assert.deepEqual(planDemonstration('Summarise the registry for me'), [{ kind: 'report' }]);
});

describe('computer use: the demonstration model', NEEDS_CHROMIUM, () => {
  for (const backend of BACKENDS) {
    test(`${backend}: a run opens a page by name, takes a screenshot, reports what it sees, and is labelled a demonstration`, async (t) => {
      const { registry } = await startStack(t, backend);
      await registerOverHttp(registry.baseUrl, 'Triage One');
      const run = await runTask(registry, 'Open the Agents page, take a screenshot and report what you see.');
      assert.equal(run.status, 'completed', run.failure_reason);
      assert.deepEqual(run.model, { name: DEMONSTRATION_MODEL, demonstration: true });
      assert.deepEqual(run.turns.map((turn: any) => turn.actions.map((action: any) => action.type)), [[], ['left_click'], ['screenshot']]);
      assert.equal(run.turns_taken, 2);
      // The click landed on the navigation's Agents link: the report is of the agents page, with the agent in it.
      assert.match(run.final_answer, /^I see the Agents page at \/agents\./);
      assert.match(run.final_answer, /Triage One/);
      assert.match(run.final_answer, /demonstration model: a script, not an AI/);
      assert.ok(run.turns.every((turn: any) => !turn.actions.some((action: any) => action.error)), JSON.stringify(run.turns));
      assert.deepEqual(run.ledger_entries.map((entry: any) => entry.type).filter((type: string) => type.startsWith('computer_use.')), [
        'computer_use.requested',
        'computer_use.started',
        'computer_use.action',
        'computer_use.action',
        'computer_use.ended',
      ]);
      const listed = (await (await fetch(`${registry.baseUrl}/v1/admin/computer-use/runs`)).json()) as any;
      assert.deepEqual(listed.runs[0].model, { name: DEMONSTRATION_MODEL, demonstration: true });

      // A task it does not follow: it still reports, and says which patterns it follows.
      const plain = await runTask(registry, 'Summarise the registry for me.');
      assert.equal(plain.status, 'completed', plain.failure_reason);
      assert.match(plain.final_answer, /^I see the Dashboard page at \/dashboard\..*I follow only these task patterns: open the <name> page/s);
      // A name it cannot find: it says so and stops, having clicked nothing.
      const missing = await runTask(registry, 'Click the Launch rockets button.');
      assert.equal(missing.status, 'completed', missing.failure_reason);
      assert.match(missing.final_answer, /found none/);
      assert.deepEqual(missing.turns.map((turn: any) => turn.actions.length), [0]);
    });
  }

  test('a console that asks for sign-in: the run signs in, the demonstration model cannot look and says so', async (t) => {
    const { registry } = await startStack(t, 'sqlite', DEMONSTRATION_MODEL, { REGISTRY_AUTH_MODE: 'jwt' });
    const run = await runTask(registry, 'Open the Agents page.');
    assert.equal(run.status, 'completed', run.failure_reason);
    assert.match(run.final_answer, /asks for sign-in\. The demonstration model finds links by opening the console itself/);
    assert.deepEqual(run.turns.map((turn: any) => turn.actions.length), [0], 'it clicked nothing');
    assert.equal(run.model.demonstration, true);
  });

  test('what is not a Messages request is refused in the API\'s own error envelope', async (t) => {
    const model = await startDemonstrationModel({ port: 0, chromiumPath: CHROMIUM });
    t.after(() => model.close());
    const post = (path: string, body: string) => fetch(`${model.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const elsewhere = await post('/v1/complete', '{}');
    assert.equal(elsewhere.status, 404);
    assert.deepEqual(((await elsewhere.json()) as any).error.type, 'not_found_error');
    const garbled = await post('/v1/messages', '{not json');
    assert.equal(garbled.status, 400);
    assert.equal(((await garbled.json()) as any).error.type, 'invalid_request_error');
    const toolless = await post('/v1/messages', JSON.stringify({ model: DEMONSTRATION_MODEL, messages: [{ role: 'user', content: [{ type: 'text', text: 'Task: look' }] }], tools: [] }));
    assert.equal(toolless.status, 400);
    assert.match(((await toolless.json()) as any).error.message, /no computer tool/);
    const addressless = await post('/v1/messages', JSON.stringify({ model: DEMONSTRATION_MODEL, messages: [{ role: 'user', content: [{ type: 'text', text: 'Task: look' }] }], tools: [{ type: 'computer_20251124', name: 'computer', display_width_px: 1280, display_height_px: 800 }] }));
    assert.equal(addressless.status, 200);
    const answer = (await addressless.json()) as any;
    assert.equal(answer.model, DEMONSTRATION_MODEL);
    assert.equal(answer.stop_reason, 'end_turn');
    assert.match(answer.content[0].text, /not told the page's address/);
  });

  test('a registry asking another model name is refused by it, and the run is not labelled a demonstration', async (t) => {
    const { registry } = await startStack(t, 'sqlite', 'claude-sonnet-4-6');
    const run = await runTask(registry, 'Open the Agents page.');
    assert.equal(run.status, 'failed');
    assert.match(run.failure_reason, /^the model answered 404: model: claude-sonnet-4-6\. This is Ward's demonstration model/);
    assert.deepEqual(run.model, { name: 'claude-sonnet-4-6', demonstration: false });
  });
});
