/**
 * Console truths (issue 46), in Debian's Chromium at 1280 and 390 px: the agents list says the order
 * it lists in; Mesh and Try show the live badge (the gateway polled, the task streamed) as the pages
 * that follow the registry do; `/computer-use/<run id>` leads to the run's page. axe finds nothing.
 * Screenshots go to CONSOLE_TRUTHS_SHOTS when it names a folder (looked at by people).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { describe, test } from 'node:test';
import { agentBody, BACKENDS } from '../helpers/registry.ts';
import { assertAccessible, launchBrowser, NEEDS_CHROMIUM, openPage, startConsoleStack } from './console-harness.ts';

const SHOTS = process.env.CONSOLE_TRUTHS_SHOTS;

for (const backend of BACKENDS) {
  describe(`console truths [${backend}]`, NEEDS_CHROMIUM, () => {
    test('agents in the order the caption says; the live badge on Mesh and Try; /computer-use/<id> leads to the run', async (t) => {
      const stack = await startConsoleStack(t, backend, { consoleEnv: { GATEWAY_URL: 'http://127.0.0.1:9', CONSOLE_MCP_URL: 'http://127.0.0.1:9/mcp' } });
      for (const name of ['First registered', 'Second registered']) {
        const answer = await stack.api.registerAgent(agentBody({ display_name: name }) as never, { idempotencyKey: randomUUID() });
        assert.ok(answer.ok);
      }
      const browser = await launchBrowser(t);
      for (const width of [1280, 390]) {
        const { page, errors } = await openPage(browser, { width, height: width === 390 ? 844 : 900 });
        await page.goto(stack.url('/agents'));
        assert.match((await page.locator('table caption').first().textContent()) ?? '', /^Oldest first/);
        const names = await page.locator('table tbody tr th a, table tbody tr td a').allTextContents();
        const first = names.findIndex((name) => name.includes('First registered'));
        const second = names.findIndex((name) => name.includes('Second registered'));
        assert.ok(first >= 0 && second > first, `listed oldest first: ${names.join(', ')}`);

        for (const [path, words] of [['/mesh', /^Live \(every \d+ s\)$/], ['/try', /^Live \(tasks stream in\)$/]] as const) {
          await page.goto(stack.url(path));
          const badge = page.locator('#live-state');
          assert.match((await badge.textContent()) ?? '', words, path);
          assert.equal(await badge.getAttribute('data-state'), 'live', path);
          assert.ok(await badge.isVisible(), `${path}: the badge is visible at ${width} px`);
          await assertAccessible(page, `${path} at ${width} px`);
          if (SHOTS) {
            mkdirSync(SHOTS, { recursive: true });
            await page.screenshot({ path: `${SHOTS}/${path.slice(1)}-${width}.png` });
          }
        }

        const runId = '01J00000000000000000000000';
        const response = await page.goto(stack.url(`/computer-use/${runId}`));
        assert.equal(new URL(page.url()).pathname, `/computer-use/runs/${runId}`, 'redirected to the run page');
        assert.notEqual(response?.status(), undefined);
        assert.doesNotMatch((await page.locator('main').textContent()) ?? '', /No such page/);
        const notAnId = await page.goto(stack.url('/computer-use/not-a-run'));
        assert.equal(notAnId?.status(), 404);
        assert.deepEqual(errors.filter((error) => !/404|Failed to load resource/.test(error)), []);
        await page.close();
      }
    });
  });
}
