/**
 * `/alerts` in Debian's Chromium against a real registry: the empty state with every rule documented,
 * an alert raised by a real condition (an agent whose certificate lapses in ten days) appearing on an
 * open page without a reload and linking to the agent, and checks that cannot run (no registry)
 * shown as such rather than as "no alert".
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { ALERT_RULES } from '../../src/console/alerts/alert-rules.ts';
import { testScope } from '../helpers/listening.ts';
import { agentBody, BACKENDS } from '../helpers/registry.ts';
import { makeCertificate } from '../registry/agents/evidence/fixtures.ts';
import { assertAccessible, launchBrowser, NEEDS_CHROMIUM, openPage, startConsoleFor, startConsoleStack, waitForLive } from './console-harness.ts';
import { refusedPort } from '../helpers/refused-port.ts';

const DAY_MS = 86_400_000;


for (const backend of BACKENDS) {
  describe(`console /alerts [${backend}]`, NEEDS_CHROMIUM, () => {
    test('no open alert, with every rule listed; then trust evidence about to lapse raises a warning live', async (t) => {
      const stack = await startConsoleStack(t, backend);
      const browser = await launchBrowser(t);
      const { page, errors } = await openPage(browser);
      await page.goto(stack.url('/alerts'));
      assert.equal(await page.locator('h1').textContent(), 'Alerts');
      assert.match((await page.locator('#alert-list .empty').textContent()) ?? '', /No open alert: none of the conditions/);
      assert.equal(await page.locator('#alert-check-failures').count(), 0);
      const rules = page.locator('#alert-rules tbody tr');
      assert.equal(await rules.count(), Object.keys(ALERT_RULES).length);
      for (const [rule, description] of Object.entries(ALERT_RULES)) {
        const row = page.locator(`#rule-${rule}`);
        assert.match((await row.textContent()) ?? '', new RegExp(rule));
        assert.ok(((await row.textContent()) ?? '').includes(description), `${rule} is described`);
      }
      await assertAccessible(page, '/alerts (none open)');

      await waitForLive(page);
      await page.evaluate('window.loadedOnce = true');
      const now = Date.now();
      const certificate = makeCertificate({ notBefore: new Date(now - 30 * DAY_MS), notAfter: new Date(now + 10 * DAY_MS) });
      const registered = await stack.api.registerAgent(
        agentBody({ display_name: 'Wound care advisor', trust: { certificates: [certificate.pem], signatures: [], attestations: [] } }) as never,
        { idempotencyKey: randomUUID() },
      );
      assert.ok(registered.ok, registered.ok ? '' : registered.text);
      const expiresAt = registered.body.trust_validation.expires_at;
      assert.ok(expiresAt);

      const alert = page.locator(`#alert-list tr[data-alert-id="trust_expiring:${registered.body.agent_id}"]`);
      await alert.waitFor({ timeout: 5000 });
      assert.equal(await page.evaluate('window.loadedOnce'), true, 'the page was not reloaded');
      assert.equal(await alert.locator('.badge').textContent(), 'warning');
      assert.match((await alert.textContent()) ?? '', /Wound care advisor: trust evidence expiring/);
      assert.ok(((await alert.textContent()) ?? '').includes(expiresAt), 'the detail says when it lapses');
      // It began 30 days before the evidence lapses.
      assert.equal(await alert.locator('time').getAttribute('datetime'), new Date(Date.parse(expiresAt) - 30 * DAY_MS).toISOString());
      assert.match((await page.locator('#alert-list-title').textContent()) ?? '', /1 open alert/);
      await assertAccessible(page, '/alerts (one open)');

      await alert.getByRole('link', { name: /Wound care advisor/ }).click();
      assert.equal(await page.locator('h1').textContent(), 'Wound care advisor');
      assert.deepEqual(errors, []);
    });

    test('checks that could not run are shown as such, not as "no alert"', async (t) => {
      const scope = testScope(t);
      const port = await refusedPort();
      const running = await startConsoleFor(scope, `http://127.0.0.1:${port}`);
      const browser = await launchBrowser(t);
      const { page, errors } = await openPage(browser, { width: 390, height: 844 });
      const response = await page.goto(new URL('/alerts', running.url).href);
      assert.equal(response?.status(), 503, 'nothing could be checked: the registry did not answer');
      const failures = page.locator('#alert-check-failures');
      assert.match((await failures.locator('h3').textContent()) ?? '', /could not run/);
      // Every read failed the same way: said once.
      assert.equal(await failures.locator('.problem').count(), 1);
      assert.equal(await failures.locator('.problem').getAttribute('data-code'), 'SERVICE_UNAVAILABLE');
      assert.match((await failures.textContent()) ?? '', new RegExp(`127\\.0\\.0\\.1:${port}`));
      assert.match((await page.locator('#alert-list .empty').textContent()) ?? '', /No open alert among the checks that ran/);
      await assertAccessible(page, '/alerts (checks failed)');
      assert.deepEqual(errors, []);
    });
  });
}
