/**
 * `/mesh` in Debian's Chromium against a real registry and a real mesh gateway: the gateway's agents
 * with their states (one not called yet, one that could not start and why), an agent's row turning
 * to running without a reload when a call starts it, a task sent through the gateway shown in flight
 * and then with its state and duration, and a gateway that is not there. axe at 1280 and 390 px.
 */
import assert from 'node:assert/strict';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { BACKENDS } from '../helpers/registry.ts';
import { authHeaders, rpc, textMessage } from '../mesh/helpers.ts';
import { startTestGateway } from '../mesh/gateway/gateway-helpers.ts';
import { assertAccessible, launchBrowser, NEEDS_CHROMIUM, openPage, startConsoleStack } from './console-harness.ts';

for (const backend of BACKENDS) {
  describe(`console /mesh [${backend}]`, NEEDS_CHROMIUM, () => {
    test('agents with their states; a call starts one and its task shows in flight, then completed, without a reload', async (t) => {
      const gateway = await startTestGateway(t, { probe: { entry: 'probe', page: '/probe-page' }, slow: { entry: 'slow-answer' }, broken: { entry: 'fails-at-start' } });
      const failed = await rpc(`${gateway.url}/rpc/broken`, 'probe/info', {});
      assert.equal(failed.error.code, -32011);
      const stack = await startConsoleStack(t, backend, { consoleEnv: { GATEWAY_URL: gateway.url } });
      const browser = await launchBrowser(t);
      const { page, errors } = await openPage(browser);
      await page.goto(stack.url('/mesh'));
      assert.equal(await page.locator('h1').textContent(), 'Mesh');
      assert.equal(await page.locator('nav[aria-label="Console pages"] a[aria-current="page"]').textContent(), 'Mesh');

      const probe = page.locator('#mesh-agent-table tr[data-alias="probe"]');
      assert.equal((await probe.locator('.badge').textContent())?.trim(), 'stopped');
      assert.match((await probe.locator('td').first().textContent()) ?? '', /not called yet/);
      // An agent's web page (the gateway's page_url) is linked from its row; an agent without one has no link.
      assert.equal(await probe.locator('a[data-page-link="probe"]').getAttribute('href'), `${gateway.url}/rpc/probe/probe-page`);
      assert.equal(await page.locator('#mesh-agent-table tr[data-alias="slow"] a[data-page-link]').count(), 0);
      const broken = page.locator('#mesh-agent-table tr[data-alias="broken"]');
      assert.match((await broken.getAttribute('data-state')) ?? '', /^(failed|backoff)$/);
      assert.match((await broken.locator('td[data-label="Last error"]').textContent()) ?? '', /\S/);
      assert.doesNotMatch((await broken.locator('td[data-label="Last error"]').textContent()) ?? '', /^none$/);
      assert.match((await page.locator('#mesh-recent').textContent()) ?? '', /broken/, 'the failed call is a recent task');
      assert.equal(await page.locator('#mesh-recent-table tr[data-alias="broken"]').getAttribute('data-state'), 'unreachable');
      await assertAccessible(page, '/mesh');

      // A task sent through the gateway: the agent starts and the task completes, seen without a reload.
      const sent = await rpc(`${gateway.url}/rpc/probe`, 'message/send', { message: { ...textMessage('hello'), messageId: 'm-1' }, configuration: { blocking: true } });
      assert.equal(sent.result.status.state, 'completed');
      await page.locator('#mesh-agent-table tr[data-alias="probe"][data-state="running"]').waitFor({ timeout: 30_000 });
      assert.match((await probe.locator('td[data-label="Port"]').textContent()) ?? '', /^\d+$/);
      assert.match((await probe.locator('td[data-label="Uptime"]').textContent()) ?? '', /^\d+ s$/);
      const task = page.locator('#mesh-recent-table tr[data-alias="probe"]');
      await task.waitFor({ timeout: 30_000 });
      assert.equal(await task.getAttribute('data-state'), 'completed');
      assert.equal((await task.locator('td[data-label="Method"] code').textContent())?.trim(), 'message/send');
      assert.match((await task.locator('td[data-label="Took"]').textContent()) ?? '', /^\d[\d,]* ms$/);
      assert.doesNotMatch((await page.locator('main').textContent()) ?? '', /hello/, 'no message content');

      // A task still running shows in flight, with the time so far.
      const leave = new AbortController();
      t.after(() => leave.abort());
      void fetch(`${gateway.url}/rpc/slow`, { method: 'POST', headers: { 'content-type': 'application/json', ...(await authHeaders()) }, body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'probe/hang', params: {} }), signal: leave.signal }).catch(() => undefined);
      const inFlight = page.locator('#mesh-in-flight-table tr[data-alias="slow"][data-state="in_flight"]');
      await inFlight.waitFor({ timeout: 15_000 });
      assert.match((await inFlight.locator('td[data-label="Running for"]').textContent()) ?? '', / ms$/);
      assert.match((await page.locator('#mesh-agent-table tr[data-alias="slow"] td[data-label="In flight"]').textContent()) ?? '', /^1$/);
      await assertAccessible(page, '/mesh with a task in flight');

      const narrow = await openPage(browser, { width: 390, height: 844 });
      await narrow.page.goto(stack.url('/mesh'));
      await assertAccessible(narrow.page, '/mesh at 390 px');
      const overflow = (await narrow.page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')) as number;
      assert.ok(overflow <= 1, `/mesh at 390 px scrolls sideways by ${overflow}px`);
      assert.equal(await narrow.page.locator('#mesh-agent-table thead').evaluate((head) => getComputedStyle(head).position), 'absolute', 'rows stack at 390 px');
      assert.deepEqual([...errors, ...narrow.errors], []);
      leave.abort();
    });

    test('a gateway that cannot be reached is said so, with its address', async (t) => {
      const dropper = createNetServer((socket) => socket.destroy());
      await new Promise<void>((resolve) => dropper.listen(0, '127.0.0.1', resolve));
      t.after(() => dropper.close());
      const port = (dropper.address() as AddressInfo).port;
      const stack = await startConsoleStack(t, backend, { consoleEnv: { GATEWAY_URL: `http://127.0.0.1:${port}` } });
      const browser = await launchBrowser(t);
      const { page, errors } = await openPage(browser);
      await page.goto(stack.url('/mesh'));
      assert.match((await page.locator('#mesh-unreachable').textContent()) ?? '', new RegExp(`gateway could not be reached at http://127\\.0\\.0\\.1:${port}`));
      assert.equal(await page.locator('#mesh-agent-table').count(), 0);
      await assertAccessible(page, '/mesh without a gateway');
      assert.deepEqual(errors, []);
    });
  });
}
