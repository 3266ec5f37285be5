/**
 * `/diagnostics` in Debian's Chromium against a real registry and a real mesh gateway: the registry
 * instance, its storage and event log as the registry reports them, the gateway's agents (one
 * running with its pid, one that failed to start with its error), and a gateway that is not there.
 */
import assert from 'node:assert/strict';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { WARD_VERSION } from '../../src/core/version.ts';
import { agentBody, BACKENDS } from '../helpers/registry.ts';
import { gatewayHealth, startTestGateway } from '../mesh/gateway/gateway-helpers.ts';
import { rpc } from '../mesh/helpers.ts';
import { assertAccessible, launchBrowser, NEEDS_CHROMIUM, openPage, startConsoleStack } from './console-harness.ts';

const fact = async (page: Page, section: string, term: string) =>
  ((await page.locator(`#${section} .facts div`, { has: page.locator('dt', { hasText: new RegExp(`^${term}$`) }) }).locator('dd').textContent()) ?? '').trim();

for (const backend of BACKENDS) {
  describe(`console /diagnostics [${backend}]`, NEEDS_CHROMIUM, () => {
    test("the registry's facts, and the gateway's agents: one running, one that could not start", async (t) => {
      const gateway = await startTestGateway(t, { probe: { entry: 'probe' }, broken: { entry: 'fails-at-start' } });
      const [started, failed] = await Promise.all([rpc(`${gateway.url}/rpc/probe`, 'probe/info', {}), rpc(`${gateway.url}/rpc/broken`, 'probe/info', {})]);
      assert.ok(started.result, JSON.stringify(started));
      assert.equal(failed.error.code, -32011);
      const health = await gatewayHealth(gateway);
      const probe = health.agents.find((agent: { alias: string }) => agent.alias === 'probe');
      const broken = health.agents.find((agent: { alias: string }) => agent.alias === 'broken');

      const stack = await startConsoleStack(t, backend, { consoleEnv: { GATEWAY_URL: gateway.url } });
      const registered = await stack.api.registerAgent(agentBody({ display_name: 'Falls risk scorer' }) as never, { idempotencyKey: randomUUID() });
      assert.ok(registered.ok);
      const diagnostics = await stack.api.diagnostics();
      assert.ok(diagnostics.ok);
      const d = diagnostics.body;

      const browser = await launchBrowser(t);
      const { page, errors } = await openPage(browser);
      await page.goto(stack.url('/diagnostics'));
      assert.equal(await page.locator('h1').textContent(), 'Diagnostics');
      assert.equal(await fact(page, 'diag-registry', 'Version'), d.version);
      assert.equal(await fact(page, 'diag-registry', 'Instance id'), d.instance_id);
      assert.equal(await fact(page, 'diag-registry', 'Registry id'), d.registry.registry_id);
      assert.equal(await fact(page, 'diag-registry', 'Environment'), 'test');
      assert.equal(await fact(page, 'diag-registry', 'Authentication'), 'disabled');
      assert.equal(await fact(page, 'diag-storage', 'Backend'), backend === 'postgres' ? 'PostgreSQL' : 'SQLite (embedded)');
      assert.match(await fact(page, 'diag-storage', 'Migrations'), new RegExp(`^${d.storage.migrations.expected} of ${d.storage.migrations.expected} applied\\s*up to date$`));
      assert.equal(await fact(page, 'diag-events', 'Last committed event'), String(d.events.last_seq));
      assert.match(await fact(page, 'diag-events', 'Newest event'), new RegExp(`^${d.events.last_seq} agent\\.trust_validated`));
      assert.match(await fact(page, 'diag-events', 'Since the last change'), /^\d+ s$/);
      assert.equal(await fact(page, 'diag-prober', 'State'), 'off', 'the test registry does not probe');
      assert.equal(await fact(page, 'diag-scale', 'Redis'), 'not configured limits and idempotency locks are per database');

      const running = page.locator('#gateway-agents tr[data-alias="probe"]');
      assert.match((await running.locator('.badge').textContent()) ?? '', /^running$/);
      assert.equal((await running.locator('td').nth(1).textContent())?.trim(), String(probe.pid));
      assert.match((await running.locator('td').nth(3).textContent()) ?? '', /\d{4}|UTC/, 'running since a time');
      const down = page.locator('#gateway-agents tr[data-alias="broken"]');
      assert.equal((await down.locator('.badge').textContent())?.trim(), broken.state);
      assert.ok(broken.last_error);
      assert.ok(((await down.locator('td').nth(4).textContent()) ?? '').includes(broken.last_error), 'the last error is shown');
      assert.equal(await fact(page, 'diag-console', 'Version'), WARD_VERSION);
      assert.equal(await fact(page, 'diag-console', 'Gateway URL'), gateway.url);
      await assertAccessible(page, '/diagnostics');

      const narrow = await openPage(browser, { width: 390, height: 844 });
      await narrow.page.goto(stack.url('/diagnostics'));
      await assertAccessible(narrow.page, '/diagnostics at 390 px');
      assert.deepEqual([...errors, ...narrow.errors], []);
    });

    test('a gateway that cannot be reached is said so, with its address', async (t) => {
      // A listener that drops every connection: a port merely closed may be taken by a parallel test.
      const dropper = createNetServer((socket) => socket.destroy());
      await new Promise<void>((resolve) => dropper.listen(0, '127.0.0.1', resolve));
      t.after(() => dropper.close());
      const port = (dropper.address() as AddressInfo).port;
      const stack = await startConsoleStack(t, backend, { consoleEnv: { GATEWAY_URL: `http://127.0.0.1:${port}` } });
      const browser = await launchBrowser(t);
      const { page, errors } = await openPage(browser);
      const response = await page.goto(stack.url('/diagnostics'));
      assert.equal(response?.status(), 200, 'the registry answered; only the gateway is missing');
      const problem = page.locator('#gateway-unreachable');
      assert.match((await problem.textContent()) ?? '', new RegExp(`gateway could not be reached at http://127\\.0\\.0\\.1:${port}`));
      assert.match((await problem.textContent()) ?? '', /could not be reached at http:\/\/127\.0\.0\.1:\d+[^.]*\S/, 'with the reason');
      assert.equal(await page.locator('#gateway-agents').count(), 0);
      assert.ok(await fact(page, 'diag-registry', 'Instance id'), 'the registry part is still there');
      await assertAccessible(page, '/diagnostics without a gateway');
      assert.deepEqual(errors, []);
    });
  });
}
