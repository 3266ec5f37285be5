/**
 * `/computer-use` in Debian's Chromium: a run driven by the demonstration model (started on loopback,
 * reached by the registry through the vendor's client library) is labelled "Demonstration model" in
 * the list and on its page, with its turns and final answer; a run of any other model is not; axe
 * finds nothing at WCAG A/AA, wide and at 390 px.
 */
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import { DEMONSTRATION_MODEL, startDemonstrationModel } from '../../src/computer-use/demo-model.ts';
import { WAIT_TIMEOUT_MS, registerOverHttp, type ListeningRegistry } from '../helpers/listening.ts';
import { BACKENDS } from '../helpers/registry.ts';
import { eventually } from '../helpers/eventually.ts';
import { CHROMIUM, NEEDS_CHROMIUM, assertAccessible, launchBrowser, openPage, startConsoleStack } from './console-harness.ts';

async function demoModel(t: TestContext): Promise<string> {
  const model = await startDemonstrationModel({ port: 0, chromiumPath: CHROMIUM });
  t.after(() => model.close());
  return model.url;
}

async function runToEnd(registry: ListeningRegistry, task: string): Promise<string> {
  const created = await fetch(`${registry.baseUrl}/v1/admin/computer-use/runs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-idempotency-key': crypto.randomUUID() },
    body: JSON.stringify({ task, max_turns: 5 }),
  });
  assert.equal(created.status, 202);
  const { session_id: sessionId } = (await created.json()) as { session_id: string };
  let status = 'queued';
  return eventually(
    async () => {
      ({ status } = (await (await fetch(`${registry.baseUrl}/v1/admin/computer-use/runs/${sessionId}`)).json()) as { status: string });
      return ['queued', 'running'].includes(status) ? undefined : sessionId;
    },
    () => `run ${sessionId} to end (still ${status})`,
    WAIT_TIMEOUT_MS,
    200,
  );
}

for (const backend of BACKENDS) {
  describe(`console /computer-use [${backend}]`, NEEDS_CHROMIUM, () => {
    test('a demonstration run is labelled as one in the list and on its page; another model\'s run is not', async (t) => {
      const url = await demoModel(t);
      const stack = await startConsoleStack(t, backend, { registryEnv: { COMPUTER_USE_MODEL_URL: url, COMPUTER_USE_API_KEY: 'demo', COMPUTER_USE_MODEL: DEMONSTRATION_MODEL } });
      stack.registry.app.ward.computerUse.setConsoleOrigin(stack.console.url);
      await registerOverHttp(stack.registry.baseUrl, 'Triage One');
      const browser = await launchBrowser(t);
      const { page, errors } = await openPage(browser);

      await page.goto(stack.url('/computer-use'));
      assert.match((await page.locator('#runs').textContent()) ?? '', /No run yet/);
      await assertAccessible(page, '/computer-use, empty');

      const demo = await runToEnd(stack.registry, 'Open the Agents page, take a screenshot and report what you see.');
      await page.goto(stack.url('/computer-use'));
      const row = page.locator(`#run-table tr[data-session-id="${demo}"]`);
      assert.match((await row.locator('td[data-label="Model"]').textContent()) ?? '', /^Demonstration model ward-demonstration$/);
      assert.match((await row.locator('td[data-label="Status"]').textContent()) ?? '', /completed/);
      await assertAccessible(page, '/computer-use');

      await row.getByRole('link').click();
      await page.waitForURL(`**/computer-use/runs/${demo}`);
      assert.equal(await page.locator('h1').textContent(), `Run ${demo}`);
      assert.match((await page.locator('#demo-note').textContent()) ?? '', /demonstration model.*not an AI/s);
      assert.match((await page.locator('#final-answer').textContent()) ?? '', /^I see the Agents page at \/agents\..*Triage One/s);
      assert.deepEqual(await page.locator('#turn-table tbody tr td[data-label="Actions"]').allTextContents(), ['opened the page', 'left_click', 'screenshot']);
      // Each turn's screenshot, passed through from the registry: a real 1280×800 PNG.
      const shots = page.locator('#turn-table img.turn-shot');
      assert.equal(await shots.count(), 3);
      await page.waitForFunction(() => [...document.querySelectorAll<HTMLImageElement>('img.turn-shot')].every((img) => img.complete && img.naturalWidth > 0));
      assert.deepEqual(await shots.evaluateAll((imgs) => imgs.map((img) => [(img as HTMLImageElement).naturalWidth, (img as HTMLImageElement).naturalHeight])), [[1280, 800], [1280, 800], [1280, 800]]);
      const none = await fetch(stack.url(`/computer-use/runs/${demo}/screenshots/9`));
      assert.equal(none.status, 404);
      await assertAccessible(page, 'a demonstration run');
      const narrow = await openPage(browser, { width: 390, height: 844 });
      await narrow.page.goto(stack.url(`/computer-use/runs/${demo}`));
      await assertAccessible(narrow.page, 'a demonstration run at 390 px');
      await narrow.page.goto(stack.url('/computer-use'));
      await assertAccessible(narrow.page, '/computer-use at 390 px');

      // Another model name (refused by the demonstration model): the run is not labelled a demonstration.
      const other = await startConsoleStack(t, backend, { registryEnv: { COMPUTER_USE_MODEL_URL: url, COMPUTER_USE_API_KEY: 'demo', COMPUTER_USE_MODEL: 'claude-sonnet-4-6' } });
      other.registry.app.ward.computerUse.setConsoleOrigin(other.console.url);
      const failed = await runToEnd(other.registry, 'Open the Agents page.');
      await page.goto(other.url(`/computer-use/runs/${failed}`));
      assert.equal(await page.locator('#demo-note').count(), 0);
      assert.equal(await page.locator('[data-demonstration]').count(), 0);
      assert.match((await page.locator('#run').textContent()) ?? '', /claude-sonnet-4-6.*Why it failed.*This is Ward's demonstration model/s);
      assert.deepEqual([...errors, ...narrow.errors], []);
    });
  });
}
