/**
 * What the console shows when the registry cannot help: unreachable (503 with the address to check)
 * and rate-limited (429 with when to try again), in Chromium; never a stack trace or a blank page.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { testScope } from '../helpers/listening.ts';
import { assertAccessible, launchBrowser, NEEDS_CHROMIUM, openPage, startConsoleFor, startConsoleStack } from './console-harness.ts';
import { refusedPort } from '../helpers/refused-port.ts';


describe('console error states', NEEDS_CHROMIUM, () => {
  test('an unreachable registry: every page answers 503 and says where it looked', async (t) => {
    const scope = testScope(t);
    const port = await refusedPort();
    const running = await startConsoleFor(scope, `http://127.0.0.1:${port}`);
    const browser = await launchBrowser(t);
    const { page } = await openPage(browser);
    for (const path of ['/dashboard', '/agents', '/agents/01ARZ3NDEKTSV4RRFFQ69G5FAV']) {
      const response = await page.goto(new URL(path, running.url).href);
      assert.equal(response?.status(), 503, path);
      const problem = page.locator('.problem[data-code="SERVICE_UNAVAILABLE"]').first();
      assert.match((await problem.textContent()) ?? '', new RegExp(`could not be reached.*127\\.0\\.0\\.1:${port}`), path);
    }
    await assertAccessible(page, 'registry unreachable');
  });

  test('a rate-limited key: the page says so and when to try again', async (t) => {
    const stack = await startConsoleStack(t, 'sqlite', { consoleEnv: { REGISTRY_AUTH_MODE: 'jwt' } });
    const created = await stack.api.createApiKey({
      org_id: 'org-ops',
      display_name: 'tight key',
      tier: 'enterprise',
      scopes: ['registry:read', 'registry:write', 'registry:admin'],
      limits: { requests_per_minute: 2 },
    });
    assert.ok(created.ok && created.body.raw_key, created.text);
    const browser = await launchBrowser(t);
    const { page } = await openPage(browser);
    await page.goto(stack.url('/sign-in'));
    await page.getByLabel('API key or access token').fill(created.body.raw_key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => url.pathname === '/dashboard');
    const response = await page.goto(stack.url('/agents'));
    assert.equal(response?.status(), 429);
    assert.match((await page.locator('.problem[data-code="RATE_LIMITED"]').textContent()) ?? '', /limiting this key.*Try again in \d+ s/s);
  });
});
