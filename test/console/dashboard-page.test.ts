/**
 * `/dashboard` in Chromium against a real registry, and a sweep of all ten pages: each renders with
 * seeded data, without console errors, passes axe at 1280×800 and in a narrow window, and the frame is
 * keyboard-reachable (skip link, navigation).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { PAGES } from '../../src/console/views/layout.ts';
import { agentBody, BACKENDS } from '../helpers/registry.ts';
import { assertAccessible, launchBrowser, NEEDS_CHROMIUM, openPage, startConsoleStack, waitForLive, type ConsoleStack } from './console-harness.ts';

async function seed(stack: ConsoleStack): Promise<string[]> {
  const ids: string[] = [];
  for (const name of ['Stroke pathway triage', 'Chest pain triage', 'Consent checker']) {
    const answer = await stack.api.registerAgent(agentBody({ display_name: name }) as never, { idempotencyKey: randomUUID() });
    assert.ok(answer.ok, answer.text);
    ids.push(answer.body.agent_id);
  }
  return ids;
}

const tile = async (page: Page, section: string, label: string) =>
  (await page.locator(`#${section} dt`, { hasText: label }).locator('xpath=following-sibling::dd').first().textContent())?.trim();

for (const backend of BACKENDS) {
  describe(`console /dashboard [${backend}]`, NEEDS_CHROMIUM, () => {
    test('counts, endpoints, alerts, traffic, charts and recent changes; a change through the API shows without a reload', async (t) => {
      const stack = await startConsoleStack(t, backend);
      const [first] = await seed(stack);
      const browser = await launchBrowser(t);
      const { page, errors } = await openPage(browser);
      await page.goto(stack.url('/dashboard'));
      assert.equal(await tile(page, 'dash-agents', 'Total'), '3');
      assert.equal(await tile(page, 'dash-agents', 'Active'), '3');
      assert.equal(await tile(page, 'dash-endpoints', 'Not probed'), '3');
      assert.match((await page.locator('#dash-alerts').textContent()) ?? '', /No open alert/);
      assert.ok(Number(await tile(page, 'dash-traffic', 'Requests')) > 0, 'the seeding requests are counted');
      assert.equal(await page.locator('#traffic-chart-caption').count(), 1);
      assert.equal(await page.locator('#health-chart-caption').count(), 1);
      assert.equal(await page.locator('#dash-recent tbody tr').count(), 6, 'three registrations and their trust validations');
      await assertAccessible(page, '/dashboard');

      await waitForLive(page);
      const suspended = await stack.api.changeAgentStatus(first as string, 'suspend', 'under review', { idempotencyKey: randomUUID() });
      assert.ok(suspended.ok);
      await page.locator('#dash-agents dt', { hasText: 'Suspended' }).locator('xpath=following-sibling::dd[text()="1"]').waitFor({ timeout: 5000 });
      assert.equal(await tile(page, 'dash-agents', 'Active'), '2');
      assert.match((await page.locator('#dash-recent tbody tr').first().textContent()) ?? '', /agent\.suspended/);
      assert.deepEqual(errors, []);
    });
  });
}

describe('console: every page', NEEDS_CHROMIUM, () => {
  test('renders without errors and passes axe at 1280×800 and 390×844; the frame works from the keyboard', async (t) => {
    const stack = await startConsoleStack(t, 'sqlite');
    await seed(stack);
    const browser = await launchBrowser(t);
    for (const [width, height] of [[1280, 800], [390, 844]] as const) {
      const { page, errors } = await openPage(browser, { width, height });
      for (const [name, label] of PAGES) {
        const response = await page.goto(stack.url(`/${name}`));
        assert.equal(response?.status(), 200, `/${name}`);
        assert.equal(await page.locator('h1').count(), 1, `/${name} has one h1`);
        assert.equal(await page.locator('nav[aria-label="Console pages"] a[aria-current="page"]').textContent(), label);
        await assertAccessible(page, `/${name} at ${width}px`);
        const overflow = (await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')) as number;
        assert.ok(overflow <= 1, `/${name} at ${width}px scrolls sideways by ${overflow}px`);
      }
      assert.deepEqual(errors, [], `${width}px`);
      await page.context().close();
    }

    const { page } = await openPage(browser);
    await page.goto(stack.url('/dashboard'));
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate('document.activeElement.textContent'), 'Skip to content');
    await page.keyboard.press('Enter');
    assert.equal(await page.evaluate('document.activeElement.id'), 'main');
    await page.goto(stack.url('/dashboard'));
    // Skip link, brand, then the ten pages in order.
    const reached: string[] = [];
    for (let index = 0; index < 2 + PAGES.length; index += 1) {
      await page.keyboard.press('Tab');
      reached.push(String(await page.evaluate('document.activeElement.textContent')).trim());
    }
    assert.deepEqual(reached.slice(2), PAGES.map(([, label]) => label));
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.pathname === '/settings');
  });
});
