/**
 * `/settings` in Debian's Chromium against a real registry: the tiers and both configurations, an API
 * key created through the browser with its raw key shown once (and never again), a refused form that
 * keeps what was typed, and the key revoked through the browser after a confirmation naming it, all
 * checked through the registry's API.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BACKENDS } from '../helpers/registry.ts';
import { assertAccessible, launchBrowser, NEEDS_CHROMIUM, openPage, startConsoleStack } from './console-harness.ts';

const DAY_MS = 86_400_000;

for (const backend of BACKENDS) {
  describe(`console /settings [${backend}]`, NEEDS_CHROMIUM, () => {
    test('tiers, the registry configuration with secrets redacted, and the console configuration', async (t) => {
      const stack = await startConsoleStack(t, backend);
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

      const secret = page.locator('#registry-config-table tr[data-variable="MESH_JWT_SECRET"]');
      assert.match((await secret.textContent()) ?? '', /\[redacted\]/);
      assert.match((await page.locator('#registry-config-table tr[data-variable="REGISTRY_ENV"]').textContent()) ?? '', /test/);
      assert.match((await page.locator('#console-config-table tr[data-variable="REGISTRY_URL"]').textContent()) ?? '', new RegExp(stack.registry.baseUrl.replace(/[.:/]/g, '\\$&')));
      assert.match((await page.locator('#console-config').textContent()) ?? '', /open access/);
      await assertAccessible(page, '/settings');

      const narrow = await openPage(browser, { width: 390, height: 844 });
      await narrow.page.goto(stack.url('/settings'));
      await assertAccessible(narrow.page, '/settings at 390 px');
      assert.deepEqual([...errors, ...narrow.errors], []);
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
