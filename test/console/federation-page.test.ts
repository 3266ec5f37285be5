/**
 * `/federation` in Debian's Chromium against real registries: a root and a sovereign child it
 * delegated to (each on its own database and port). The child's console shows its chain root → child
 * with the statement's validity; the root's console lists the child and revokes it through the
 * browser, after a confirmation naming it and with a reason, checked through the API; the child then
 * learns it was revoked. Also the empty state, and a registry that stopped answering.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createRegistryClient } from '../../src/client/registry-client.ts';
import { delegate, startRegistry } from '../helpers/federation.ts';
import { testScope } from '../helpers/listening.ts';
import { BACKENDS } from '../helpers/registry.ts';
import { assertAccessible, launchBrowser, NEEDS_CHROMIUM, openPage, startConsoleFor } from './console-harness.ts';

for (const backend of BACKENDS) {
  describe(`console /federation [${backend}]`, NEEDS_CHROMIUM, () => {
    test('a child shows its chain; the root lists it and revokes it through the browser, confirmed and with a reason', async (t) => {
      // Consoles are closed before the registries they follow (the scope's clean-up is registered first).
      const scope = testScope(t);
      const root = await startRegistry(t, backend, { REGISTRY_TIER: 'root', REGISTRY_NAME: 'root', REGISTRY_JURISDICTION: 'GB' });
      const child = await startRegistry(t, backend, { REGISTRY_TIER: 'sovereign', REGISTRY_NAME: 'nhs', REGISTRY_JURISDICTION: 'GB', REGISTRY_PARENT_URL: root.baseUrl });
      await delegate(root, child, 'sovereign');
      const rootConsole = await startConsoleFor(scope, root.baseUrl);
      const childConsole = await startConsoleFor(scope, child.baseUrl);
      const browser = await launchBrowser(t);
      const { page, errors } = await openPage(browser);

      // The child's console: its place under the root, and the root's statement about it.
      await page.goto(new URL('/federation', childConsole.url).href);
      assert.equal(await page.locator('h1').textContent(), 'Federation');
      const place = page.locator('#federation-place');
      assert.deepEqual(await place.locator('ol.chain li').evaluateAll((items) => items.map((item) => item.getAttribute('data-registry-id'))), [root.id, child.id]);
      assert.match((await place.locator('ol.chain li').last().textContent()) ?? '', /sovereign.*\(this registry\)/s);
      const statement = place.locator('tr[data-statement="0"]');
      assert.match((await statement.textContent()) ?? '', new RegExp(`${root.id}\\s*→\\s*${child.id}.*sovereign registry for GB`, 's'));
      assert.equal(await statement.locator('.badge').textContent(), 'valid');
      assert.match((await statement.textContent()) ?? '', /issued.*expires/s);
      assert.match((await page.locator('#federation-children .empty').textContent()) ?? '', /No child registry is registered here yet.*POST \/v1\/registries/s);
      await assertAccessible(page, 'child /federation');

      // The child publishes only its own keys: its bundle is verified to the root only with a root anchor the person gives.
      await page.getByRole('link', { name: "Verify this registry's trust bundle" }).click();
      assert.equal(await page.locator('#trust-bundle [data-verdict]').getAttribute('data-verdict'), 'unanchored');
      await page.getByLabel('Root anchor (optional)').fill('{"keys": "not a key set"}');
      await page.getByRole('button', { name: 'Verify' }).click();
      assert.match((await page.locator('#trust-bundle [data-verdict="bad-anchor"]').textContent()) ?? '', /must be a JWKS/);
      const rootJwks = await createRegistryClient({ baseUrl: root.baseUrl }).jwks();
      assert.ok(rootJwks.ok);
      await page.getByLabel('Root anchor (optional)').fill(rootJwks.text);
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.waitForSelector('#trust-bundle [data-verdict="verified"]');
      const steps = page.locator('#trust-bundle li[data-step-status]');
      // The Ward chain's five steps, then the OpenID Federation chain's and the trust marks (docs/federation.md, "One chain").
      assert.deepEqual(await steps.locator('.badge').allTextContents(), ['passed', 'passed', 'passed', 'passed', 'passed', 'passed', 'passed']);
      assert.ok((await steps.locator('strong').allTextContents()).includes(`Statement 1: ${root.id} → ${child.id}`), 'the Ward statement from the root to the child is a step');
      await assertAccessible(page, 'child bundle verified with the root anchor');

      // The root's console: the child listed, then revoked.
      await page.goto(new URL('/federation', rootConsole.url).href);
      assert.deepEqual(await page.locator('#federation-place ol.chain li').evaluateAll((items) => items.map((item) => item.getAttribute('data-registry-id'))), [root.id]);
      const row = page.locator(`#federation-children tr[data-registry-id="${child.id}"]`);
      const listed = (await row.textContent()) ?? '';
      assert.match(listed, /nhs registry/);
      assert.match(listed, /sovereign registry · GB/);
      assert.ok(listed.includes(child.baseUrl), 'the API base URL is shown');
      assert.equal(await row.locator('td:nth-child(2) .badge').textContent(), 'active');
      assert.match(listed, /Keys: 1 pinned, 1 in force/);
      await assertAccessible(page, 'root /federation');

      await row.getByRole('link', { name: 'Revoke nhs registry' }).click();
      assert.equal(await page.locator('h1').textContent(), 'Revoke nhs registry?');
      const form = page.locator('main form');
      assert.ok(((await form.textContent()) ?? '').includes(child.id), 'the confirmation names the registry');
      assert.equal(await page.getByLabel('Reason').getAttribute('required'), '');
      await assertAccessible(page, 'revocation confirmation');
      await page.getByLabel('Reason').fill('keys exposed in a drill');
      await page.getByRole('button', { name: 'Revoke nhs registry' }).click();
      await page.waitForSelector('.notice-success');
      assert.match((await page.locator('.notice-success').textContent()) ?? '', new RegExp(`nhs registry \\(${child.id}\\) was revoked`));

      const record = await createRegistryClient({ baseUrl: root.baseUrl }).getRegistry(child.id);
      assert.ok(record.ok, record.ok ? '' : record.text);
      assert.equal(record.body.status, 'revoked');
      assert.equal(record.body.revocation_reason, 'keys exposed in a drill');
      assert.ok(record.body.revoked_at);

      const revokedRow = page.locator(`#federation-children tr[data-registry-id="${child.id}"]`);
      assert.equal(await revokedRow.locator('td:nth-child(2) .badge').textContent(), 'revoked');
      assert.match((await revokedRow.textContent()) ?? '', /Reason: keys exposed in a drill/);
      assert.equal(await revokedRow.getByRole('link', { name: 'Revoke nhs registry' }).count(), 0, 'a revoked child offers no revocation');
      await assertAccessible(page, 'after revocation');

      // Once the child asks its parent again it knows, and its console says so.
      await child.app.ward.parentLink.refresh();
      assert.ok(child.app.ward.parentLink.revoked(), 'the child believes the signed revocation');
      await page.goto(new URL('/federation', childConsole.url).href);
      assert.equal(await page.locator('#federation-place .problem').getAttribute('data-code'), 'REGISTRY_REVOKED');
      assert.deepEqual(errors, []);
    });

    test('a registry without children shows how one is registered; a registry that stopped is said to be unreachable', async (t) => {
      const scope = testScope(t);
      const root = await startRegistry(t, backend, { REGISTRY_TIER: 'root', REGISTRY_NAME: 'root', REGISTRY_JURISDICTION: 'GB' });
      const running = await startConsoleFor(scope, root.baseUrl);
      const browser = await launchBrowser(t);
      const { page, errors } = await openPage(browser);
      await page.goto(new URL('/federation', running.url).href);
      const empty = (await page.locator('#federation-children .empty').textContent()) ?? '';
      assert.match(empty, /sovereign registry \(one per country\).*POST \/v1\/registries.*docs\/federation\.md/s);
      assert.equal(await page.locator('#federation-children table').count(), 0);
      await assertAccessible(page, 'no children');
      assert.deepEqual(errors, []);

      await root.app.close();
      const { page: later } = await openPage(browser);
      const response = await later.goto(new URL('/federation', running.url).href);
      assert.equal(response?.status(), 503);
      assert.match((await later.locator('.problem').textContent()) ?? '', /The registry could not be reached/);
      await later.goto(new URL('/trust', running.url).href);
      assert.match((await later.locator('.problem').textContent()) ?? '', /The registry could not be reached/);
      await assertAccessible(later, 'registry unreachable');
    });
  });
}
