/**
 * `/settings` in Debian's Chromium against a real registry: the tiers and every setting grouped and
 * searchable (secrets set in the registry's environment never reach the page), an API
 * key created through the browser with its raw key shown once (and never again), a refused form that
 * keeps what was typed, and the key revoked through the browser after a confirmation naming it, all
 * checked through the registry's API.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { BACKENDS } from '../helpers/registry.ts';
import { SETTING_GROUPS, SETTINGS } from '../../src/core/settings-catalogue.ts';
import { assertAccessible, launchBrowser, NEEDS_CHROMIUM, openPage, startConsoleStack } from './console-harness.ts';

/** Secrets set in the registry's environment: the settings page says each is set and shows none. */
const SECRETS = {
  MESH_JWT_SECRET: 'mesh-secret-that-must-never-show-9f3c2a',
  COMPUTER_USE_API_KEY: 'sk-ant-must-never-show-77e1',
  REGISTRY_KEY_ENCRYPTION_KEY: '5e'.repeat(32),
  REGISTRY_API_KEY_SECRET: 'api-key-hmac-secret-must-never-show-0123456789',
  REDIS_URL: 'redis://:redis-password-never-shown@127.0.0.1:6379',
};

const DAY_MS = 86_400_000;

/** axe-core at WCAG 2.x A and AA: nothing at all, of any impact (stricter than the harness's serious-or-critical check). */
async function assertNoViolations(page: Page, label: string): Promise<void> {
  const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa']).analyze();
  assert.deepEqual(results.violations.map((violation) => `${violation.id} (${violation.impact}): ${violation.nodes.map((node) => node.target.join(' ')).slice(0, 3).join('; ')}`), [], label);
}

for (const backend of BACKENDS) {
  describe(`console /settings [${backend}]`, NEEDS_CHROMIUM, () => {
    test('tiers, and every setting grouped with its meaning, value, default and source; no secret in the page', async (t) => {
      const stack = await startConsoleStack(t, backend, { registryEnv: SECRETS });
      const browser = await launchBrowser(t);
      const { page, errors } = await openPage(browser);
      await page.goto(stack.url('/settings'));
      assert.equal(await page.locator('h1').textContent(), 'Settings');
      assert.match((await page.locator('#api-keys').textContent()) ?? '', /No API key exists yet/);

      const enterprise = page.locator('#tier-table tbody tr', { hasText: 'enterprise' });
      assert.match((await enterprise.textContent()) ?? '', /unlimited/);
      const developer = page.locator('#tier-table tbody tr', { hasText: 'developer' });
      assert.deepEqual((await developer.locator('td').allTextContents()).slice(0, 5), ['60', '1,000', '5', '30', '30']);
      assert.match((await page.locator('#tier-table thead').textContent()) ?? '', /per minute.*per day/s);

      // The seven groups, in order, each setting in its group with a meaning.
      const titles = await page.locator('section[data-setting-group] h2').allTextContents();
      assert.deepEqual(titles, SETTING_GROUPS.map(([, title]) => title));
      for (const setting of SETTINGS) {
        const row = page.locator(`#settings-${setting.group}-table tr[data-variable="${setting.name}"]`);
        assert.equal(await row.count(), 1, `${setting.name} in ${setting.group}`);
      }
      const env = page.locator('tr[data-variable="REGISTRY_ENV"]');
      assert.match((await env.locator('td[data-label="Value"]').textContent()) ?? '', /^test$/);
      assert.equal(await env.locator('td[data-label="From"]').textContent(), 'environment');
      assert.match((await env.locator('th').textContent()) ?? '', /turns on every production guard/);
      assert.equal(await page.locator('tr[data-variable="REGISTRY_SIGNING_ALG"] td[data-label="From"]').textContent(), 'default');
      assert.equal(await page.locator('tr[data-variable="REGISTRY_SIGNING_ALG"] td[data-label="Default"]').textContent(), 'ES256');
      assert.match((await page.locator('tr[data-variable="REGISTRY_URL"] td[data-label="Value"]').textContent()) ?? '', new RegExp(stack.registry.baseUrl.replace(/[.:/]/g, '\\$&')));
      assert.equal(await page.locator('tr[data-variable="REGISTRY_URL"] td[data-label="From"]').textContent(), 'environment');
      assert.match((await page.locator('#console-config').textContent()) ?? '', /open access/);

      // Secrets: said to be set, never shown, in the page or in anything the console sends.
      for (const name of ['MESH_JWT_SECRET', 'COMPUTER_USE_API_KEY', 'REGISTRY_KEY_ENCRYPTION_KEY', 'REGISTRY_API_KEY_SECRET', 'REDIS_URL']) {
        assert.match((await page.locator(`tr[data-variable="${name}"] td[data-label="Value"]`).textContent()) ?? '', /^set \(a secret: never shown\)$/, name);
      }
      const html = await page.content();
      const raw = await (await fetch(stack.url('/settings?q=secret'))).text();
      for (const secret of Object.values(SECRETS)) {
        assert.ok(!html.includes(secret) && !raw.includes(secret), `a secret value reached the page: ${secret.slice(0, 12)}…`);
      }
      await assertNoViolations(page, '/settings');

      const narrow = await openPage(browser, { width: 390, height: 844 });
      await narrow.page.goto(stack.url('/settings'));
      await assertNoViolations(narrow.page, '/settings at 390 px');
      await narrow.page.getByLabel('Find a setting').fill('timeout');
      await assertNoViolations(narrow.page, '/settings at 390 px, searching');
      const scrollWidth = await narrow.page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(scrollWidth <= 390, `the page is ${scrollWidth} px wide at 390 px`);
      assert.deepEqual([...errors, ...narrow.errors], []);
    });

    test('the search box filters the settings as one types, and by ?q= without script', async (t) => {
      const stack = await startConsoleStack(t, backend, { registryEnv: SECRETS });
      const browser = await launchBrowser(t);
      const { page, errors } = await openPage(browser);
      await page.goto(stack.url('/settings'));
      const visible = () => page.locator('tr[data-variable]:visible').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-variable')));
      // Every group is collapsed until opened (issue 46: the page was 6 800 px tall); opening one shows its settings.
      assert.deepEqual(await visible(), []);
      assert.equal(await page.locator('section[data-setting-group]:visible h2').count(), SETTING_GROUPS.length);
      await page.locator('#settings-console summary').click();
      assert.equal((await visible()).length, SETTINGS.filter((setting) => setting.group === 'console').length);
      await page.locator('#settings-console summary').click();
      await page.getByLabel('Find a setting').fill('session');
      assert.deepEqual((await visible()).sort(), ['CONSOLE_SESSION_IDLE_MINUTES', 'CONSOLE_SESSION_MAX_HOURS']);
      assert.deepEqual(await page.locator('section[data-setting-group]:visible h2').allTextContents(), ['Console']);
      assert.equal(await page.locator('#setting-count').textContent(), `2 of ${SETTINGS.length} settings match.`);
      // Values are searched too, but never a secret's.
      await page.getByLabel('Find a setting').fill(SECRETS.MESH_JWT_SECRET);
      assert.deepEqual(await visible(), []);
      assert.match((await page.locator('#setting-count').textContent()) ?? '', /^No setting matches/);
      await page.getByLabel('Find a setting').fill('ES256');
      assert.deepEqual(await visible(), ['REGISTRY_SIGNING_ALG']);
      await page.getByLabel('Find a setting').fill('');
      assert.deepEqual(await visible(), [], 'cleared: collapsed again');
      await assertNoViolations(page, '/settings while searching');

      // Without script, the same filter by the form's GET.
      const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1280, height: 800 } });
      const plain = await context.newPage();
      await plain.goto(stack.url('/settings'));
      await plain.getByLabel('Find a setting').fill('redis');
      await plain.getByRole('button', { name: 'Find' }).click();
      await plain.waitForURL(/q=redis/);
      const rows = await plain.locator('tr[data-variable]:visible').evaluateAll((found) => found.map((row) => row.getAttribute('data-variable')));
      assert.deepEqual(rows.sort(), ['REDIS_URL']);
      assert.deepEqual(await plain.locator('section[data-setting-group]:visible h2').allTextContents(), ['Registry']);
      assert.match((await plain.locator('#setting-count').textContent()) ?? '', new RegExp(`^1 of ${SETTINGS.length} settings match`));
      assert.deepEqual(errors, []);
    });

    test('create a key through the browser: the raw key is shown once; then revoke it after a confirmation', async (t) => {
      const stack = await startConsoleStack(t, backend);
      const browser = await launchBrowser(t);
      const { page, errors } = await openPage(browser);
      await page.goto(stack.url('/settings'));
      await page.getByRole('link', { name: 'Create an API key' }).click();
      assert.equal(await page.locator('h1').textContent(), 'Create an API key');
      await assertAccessible(page, 'create form');

      // Refused by the registry's validation: the problem is shown and what was typed is kept.
      await page.getByLabel('Organisation id').fill('not an org id!');
      await page.getByLabel('Name', { exact: true }).fill('North ward integration');
      await page.getByLabel('Tier').selectOption('team');
      await page.getByLabel('registry:write').check();
      const formKey = await page.locator('input[name="idempotency_key"]').inputValue();
      assert.match(formKey, /^[0-9a-f-]{36}$/);
      const refused = page.waitForResponse((response) => response.request().method() === 'POST');
      await page.getByRole('button', { name: 'Create the key' }).click();
      assert.equal((await refused).status(), 422);
      await page.locator('.problem[data-code="VALIDATION_ERROR"]').waitFor();
      assert.match((await page.locator('#key-form-problem').textContent()) ?? '', /Organisation id/);
      assert.equal(await page.getByLabel('Organisation id').inputValue(), 'not an org id!');
      assert.equal(await page.getByLabel('Name', { exact: true }).inputValue(), 'North ward integration');
      assert.equal(await page.getByLabel('Tier').inputValue(), 'team');
      assert.equal(await page.getByLabel('registry:write').isChecked(), true);
      assert.equal(await page.getByLabel('Organisation id').getAttribute('aria-invalid'), 'true');
      // The form is drawn again with the idempotency key it was sent with: had the registry committed
      // the first sending (a timeout, say), sending again replays it instead of creating a second key.
      assert.equal(await page.locator('input[name="idempotency_key"]').inputValue(), formKey);
      await assertAccessible(page, 'refused form');
      const none = await stack.api.listApiKeys();
      assert.ok(none.ok);
      assert.equal(none.body.api_keys.length, 0, 'nothing was created');

      const expires = new Date(Date.now() + 30 * DAY_MS).toISOString().slice(0, 16);
      await page.getByLabel('Organisation id').fill('org-north');
      await page.getByLabel('Expires (UTC, optional)').fill(expires);
      await page.getByRole('button', { name: 'Create the key' }).click();
      await page.locator('#raw-key').waitFor();
      assert.equal(await page.locator('h1').textContent(), 'Key created: North ward integration');
      const rawKey = (await page.locator('#raw-key').textContent()) ?? '';
      assert.match(rawKey, /^rk_[A-Za-z0-9]{32,}$/);
      assert.match((await page.locator('#raw-key-box').textContent()) ?? '', /will not be shown again/);
      await assertAccessible(page, 'created key');

      const listed = await stack.api.listApiKeys();
      assert.ok(listed.ok);
      assert.equal(listed.body.api_keys.length, 1);
      const key = listed.body.api_keys[0];
      assert.ok(key);
      assert.deepEqual(
        { org_id: key.org_id, display_name: key.display_name, tier: key.tier, scopes: key.scopes, expires_at: key.expires_at, active: key.active },
        { org_id: 'org-north', display_name: 'North ward integration', tier: 'team', scopes: ['registry:read', 'registry:write'], expires_at: `${expires}:00.000Z`, active: true },
      );
      assert.ok(rawKey.startsWith(key.key_prefix));
      assert.equal((await stack.api.as(rawKey).caller()).ok, true, 'the key shown works');
      // The corrected form was sent under the same key: the registry replays that creation for it.
      const replayed = await stack.api.createApiKey(
        { org_id: 'org-north', display_name: 'North ward integration', tier: 'team', scopes: ['registry:read', 'registry:write'], expires_at: `${expires}:00.000Z` },
        { idempotencyKey: formKey },
      );
      assert.ok(replayed.ok, replayed.ok ? '' : replayed.text);
      assert.equal(replayed.body.key_id, key.key_id);
      assert.equal(replayed.body.raw_key ?? null, null, 'a replay holds no raw key');

      // Sending the same form again (a reload) creates nothing and shows no raw key.
      await page.reload();
      await page.locator('#raw-key-replayed').waitFor();
      assert.equal(await page.locator('#raw-key').count(), 0);
      assert.ok(!((await page.content()).includes(rawKey)));
      const again = await stack.api.listApiKeys();
      assert.ok(again.ok);
      assert.equal(again.body.api_keys.length, 1, 'one key for one form');

      await page.goto(stack.url('/settings'));
      assert.ok(!((await page.content()).includes(rawKey)), 'the raw key is not on the settings page');
      const row = page.locator(`#api-key-table tr[data-key-id="${key.key_id}"]`);
      assert.match((await row.textContent()) ?? '', new RegExp(`${key.key_prefix}…`));
      assert.match((await row.textContent()) ?? '', /active/);

      await page.getByRole('link', { name: 'Revoke North ward integration' }).click();
      assert.equal(await page.locator('h1').textContent(), 'Revoke key North ward integration?');
      assert.match((await page.locator('main form').textContent()) ?? '', new RegExp(key.key_id));
      await assertAccessible(page, 'revoke confirmation');
      await page.getByRole('button', { name: 'Revoke North ward integration' }).click();
      await page.waitForSelector('.notice-success');
      assert.match((await page.locator('.notice-success').textContent()) ?? '', /North ward integration .* was revoked/);
      assert.match((await row.textContent()) ?? '', /revoked/);
      assert.equal(await page.getByRole('link', { name: 'Revoke North ward integration' }).count(), 0);

      const after = await stack.api.getApiKey(key.key_id);
      assert.ok(after.ok);
      assert.equal(after.body.active, false);
      assert.ok(after.body.revoked_at);
      assert.equal((await stack.api.as(rawKey).caller()).status, 401, 'the registry refuses the revoked key');
      assert.deepEqual(errors, []);
    });

    test('an expiry that is not in the future is refused by the registry and explained on the form', async (t) => {
      const stack = await startConsoleStack(t, backend);
      const browser = await launchBrowser(t);
      const { page, errors } = await openPage(browser);
      await page.goto(stack.url('/settings/keys/new'));
      await page.getByLabel('Organisation id').fill('org-south');
      await page.getByLabel('Name', { exact: true }).fill('Expired before use');
      await page.getByLabel('Expires (UTC, optional)').fill('2020-01-01T00:00');
      const formKey = await page.locator('input[name="idempotency_key"]').inputValue();
      await page.getByRole('button', { name: 'Create the key' }).click();
      await page.locator('.problem[data-code="VALIDATION_ERROR"]').waitFor();
      assert.equal(await page.locator('input[name="idempotency_key"]').inputValue(), formKey, 'the same form, the same idempotency key');
      assert.match((await page.locator('#key-form-problem').textContent()) ?? '', /Expires.*must be in the future/);
      assert.equal(await page.getByLabel('Expires (UTC, optional)').inputValue(), '2020-01-01T00:00');
      const listed = await stack.api.listApiKeys();
      assert.ok(listed.ok);
      assert.equal(listed.body.api_keys.length, 0);
      assert.deepEqual(errors, []);
    });

    test('the revoke confirmation warns about the key signed in with, matched by its exact id', async (t) => {
      const stack = await startConsoleStack(t, backend, { consoleEnv: { REGISTRY_AUTH_MODE: 'jwt' } });
      const other = await stack.api.createApiKey({ org_id: 'org-other', display_name: 'Reporting key', scopes: ['registry:read'] });
      assert.ok(other.ok, other.text);
      // The admin key acts for an organisation whose id spells the other key's id, so the session's
      // label ("Key <own id> · <org id>") contains that id too.
      const admin = await stack.api.createApiKey({ org_id: other.body.key_id, display_name: 'Console admin', scopes: ['registry:read', 'registry:write', 'registry:admin'] });
      assert.ok(admin.ok && admin.body.raw_key, admin.text);
      const browser = await launchBrowser(t);
      const { page, errors } = await openPage(browser);
      await page.goto(stack.url('/settings'));
      await page.getByLabel('API key or access token').fill(admin.body.raw_key);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL((url) => url.pathname === '/settings');
      assert.match((await page.locator('.viewer').textContent()) ?? '', new RegExp(`${admin.body.key_id} · ${other.body.key_id}`));

      await page.goto(stack.url(`/settings/keys/${other.body.key_id}/revoke`));
      assert.equal(await page.locator('h1').textContent(), 'Revoke key Reporting key?');
      assert.doesNotMatch((await page.locator('main').textContent()) ?? '', /This is the key you are signed in with/);

      await page.goto(stack.url(`/settings/keys/${admin.body.key_id}/revoke`));
      assert.equal(await page.locator('h1').textContent(), 'Revoke key Console admin?');
      assert.match((await page.locator('main form .problem[role="alert"]').textContent()) ?? '', /This is the key you are signed in with/);
      await assertAccessible(page, 'revoke own key');
      assert.deepEqual(errors, []);
    });
  });
}
