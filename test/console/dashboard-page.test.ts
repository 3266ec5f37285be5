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

for (const backend of BACKENDS) {
  describe(`console /dashboard charts [${backend}]`, NEEDS_CHROMIUM, () => {
    test('axes with units, a time range to choose, an empty state that says what fills it, and the figures as a table', async (t) => {
      const stack = await startConsoleStack(t, backend);
      const browser = await launchBrowser(t);
      const { page, errors } = await openPage(browser);
      await page.goto(stack.url('/dashboard'));
      // A fresh registry: nothing registered, so the health chart says what will fill it.
      assert.match((await page.locator('#health-chart figcaption').textContent()) ?? '', /No active agent has an endpoint yet\. Register an agent/);
      assert.equal(await page.locator('#health-chart .chart-empty').count(), 1);

      await seed(stack);
      await page.goto(stack.url('/dashboard'));
      const range = page.locator('nav[aria-label="Chart time range"]');
      assert.equal(await range.locator('a[aria-current="true"]').textContent(), 'Last hour');
      const traffic = page.locator('#traffic-chart');
      assert.equal(await traffic.locator('svg .chart-unit').textContent(), 'requests');
      assert.equal(await page.locator('#health-chart svg .chart-unit').textContent(), 'endpoints');
      assert.equal(await traffic.locator('svg .chart-grid text').first().textContent(), '0', 'the value axis starts at 0');
      const ticks = await traffic.locator('svg .chart-tick text').allTextContents();
      assert.ok(ticks.length >= 4 && ticks.every((tick) => /^\d\d:\d0$/.test(tick)), ticks.join(' '));
      assert.match((await traffic.locator('figcaption strong').textContent()) ?? '', /^Requests answered, last hour, per minute$/);
      assert.equal(await traffic.locator('.chart-empty').count(), 0, 'the seeding requests fill it');
      assert.match((await page.locator('#health-chart figcaption').textContent()) ?? '', /No endpoint has been probed yet: the registry's health prober/, 'this test registry does not probe');

      // The text alternative: the same figures as a table, which add up to the requests tile.
      await traffic.locator('summary').click();
      const table = traffic.locator('table');
      assert.deepEqual(await table.locator('thead th').allTextContents(), ['Interval (UTC)', '2xx/3xx (requests)', '4xx (requests)', '5xx (requests)']);
      const cells = await table.locator('tbody td.num').allTextContents();
      const total = cells.reduce((sum, cell) => sum + Number(cell), 0);
      const rows = await table.locator('tbody tr').count();
      assert.ok(rows >= 1 && rows <= 61, `${rows} rows`);
      assert.ok(total > 0 && Math.abs(total - Number(await tile(page, 'dash-traffic', 'Requests'))) <= 3, `table ${total}, tile ${await tile(page, 'dash-traffic', 'Requests')}`);
      assert.match((await table.locator('tbody th').first().textContent()) ?? '', /^\d\d:\d\d–\d\d:\d\d$/);
      await assertAccessible(page, '/dashboard, last hour');

      // A week: the axis in days, and what the registry does not keep shaded and said so.
      await range.locator('a', { hasText: 'Last week' }).click();
      await page.waitForURL((url) => url.searchParams.get('range') === 'week');
      assert.equal(await page.locator('nav[aria-label="Chart time range"] a[aria-current="true"]').textContent(), 'Last week');
      const weekTicks = await page.locator('#health-chart svg .chart-tick text').allTextContents();
      assert.ok(weekTicks.length >= 5 && weekTicks.every((tick) => /^(Sun|Mon|Tue|Wed|Thu|Fri|Sat) \d{1,2}$/.test(tick)), weekTicks.join(' '));
      assert.match((await page.locator('#health-chart figcaption').textContent()) ?? '', /Shaded: the registry replays endpoint health over the last day only/);
      assert.match((await page.locator('#traffic-chart figcaption').textContent()) ?? '', /Shaded: this registry instance counts requests in memory for the last hour only/);
      assert.equal(await page.locator('#health-chart .chart-not-kept').count(), 1);
      assert.match((await page.locator('#traffic-chart figcaption strong').textContent()) ?? '', /last week, per hour/);
      await assertAccessible(page, '/dashboard, last week');

      const narrow = await openPage(browser, { width: 390, height: 844 });
      await narrow.page.goto(stack.url('/dashboard?range=day'));
      assert.equal(await narrow.page.locator('nav[aria-label="Chart time range"] a[aria-current="true"]').textContent(), 'Last day');
      await assertAccessible(narrow.page, '/dashboard, last day, at 390 px');
      const overflow = (await narrow.page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')) as number;
      assert.ok(overflow <= 1, `scrolls sideways by ${overflow}px`);
      assert.deepEqual([...errors, ...narrow.errors], []);
    });

    test('recent changes name the agent, with its id beneath', async (t) => {
      const stack = await startConsoleStack(t, backend);
      const [first] = await seed(stack);
      const browser = await launchBrowser(t);
      const { page, errors } = await openPage(browser);
      await page.goto(stack.url('/dashboard'));
      const rows = page.locator('#recent-changes tbody tr');
      for (const row of await rows.all()) {
        const subject = row.locator('td[data-label="Subject"]');
        assert.match((await subject.locator('a').textContent()) ?? '', /^(Stroke pathway triage|Chest pain triage|Consent checker)$/, 'a name, also for trust validations');
        assert.match((await subject.locator('code').textContent()) ?? '', /^[0-9A-HJKMNP-TV-Z]{26}$/, 'the id as secondary text');
      }
      assert.ok(first && (await page.locator(`#recent-changes a[href="/agents/${first.slice(first.lastIndexOf('/') + 1)}"]`).count()) === 2);
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
