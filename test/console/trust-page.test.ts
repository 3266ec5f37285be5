/**
 * `/trust` in Debian's Chromium against a real registry: its anchors and published keys, an agent's
 * trust bundle verified in the console's server step by step (reached from the agent's page), an
 * unknown subject answered with the registry's 404, and a signing-key rotation carried out through the
 * browser (confirmed first) and checked through the API, then followed live by an open page.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { agentBody, BACKENDS, ulidOf } from '../helpers/registry.ts';
import { assertAccessible, launchBrowser, NEEDS_CHROMIUM, openPage, startConsoleStack, waitForLive, type ConsoleStack } from './console-harness.ts';

async function registerAgent(stack: ConsoleStack, name: string): Promise<string> {
  const answer = await stack.api.registerAgent(agentBody({ display_name: name }) as never, { idempotencyKey: randomUUID() });
  assert.ok(answer.ok, answer.ok ? '' : answer.text);
  return answer.body.agent_id;
}

async function publishedKids(stack: ConsoleStack): Promise<string[]> {
  const jwks = await stack.api.jwks();
  assert.ok(jwks.ok);
  return jwks.body.keys.map((key) => String(key.kid));
}

const STEPS = ['Trust anchor', 'Delegation chain', 'Subject constraints', 'Bundle signature'];

for (const backend of BACKENDS) {
  describe(`console /trust [${backend}]`, NEEDS_CHROMIUM, () => {
    test('anchors and keys; an agent bundle verified step by step; an unknown subject is the registry 404', async (t) => {
      const stack = await startConsoleStack(t, backend);
      const agentId = await registerAgent(stack, 'Stroke pathway triage');
      const [kid] = await publishedKids(stack);
      assert.ok(kid);
      const browser = await launchBrowser(t);
      const { page, errors } = await openPage(browser);

      await page.goto(stack.url('/trust'));
      assert.equal(await page.locator('h1').textContent(), 'Trust');
      const anchorRow = page.locator(`#trust-anchors tr[data-kid="${kid}"]`);
      assert.match((await anchorRow.textContent()) ?? '', /ES256.*root.* to .*current/s);
      const keyRow = page.locator(`#trust-jwks tr[data-kid="${kid}"]`);
      assert.match((await keyRow.textContent()) ?? '', /signs now/);
      assert.equal(await keyRow.locator('.badge-valid').textContent(), 'current');
      assert.equal(await page.locator('#trust-bundle').count(), 0, 'no bundle until a subject is asked for');
      await assertAccessible(page, '/trust');

      // From the agent's record, as a person would come.
      await page.goto(stack.url(`/agents/${ulidOf(agentId)}`));
      await page.getByRole('link', { name: "Verify this agent's trust bundle" }).click();
      await page.waitForSelector('#trust-bundle');
      assert.equal(await page.getByLabel('Agent or registry URI').inputValue(), agentId);
      const verdict = page.locator('#trust-bundle [data-verdict]');
      assert.equal(await verdict.getAttribute('data-verdict'), 'verified');
      assert.equal(await verdict.locator('.badge').textContent(), 'Verified');
      const steps = page.locator('#trust-bundle li[data-step-status]');
      assert.deepEqual(await steps.locator('strong').allTextContents(), STEPS);
      assert.deepEqual(await steps.locator('.badge').allTextContents(), STEPS.map(() => 'passed'));
      assert.match((await steps.first().textContent()) ?? '', new RegExp(kid));
      await page.getByText('The bundle as the registry sent it (JSON)').click();
      assert.match((await page.locator('#trust-bundle pre').textContent()) ?? '', /"signed_bundle"/);
      await assertAccessible(page, 'verified bundle');

      // An unknown agent: the registry's 404, explained, and the page answers 404 too.
      await page.getByLabel('Agent or registry URI').fill('registry://gb/agents/01ARZ3NDEKTSV4RRFFQ69G5FAV');
      const response = page.waitForResponse((r) => r.url().includes('/trust?'));
      await page.getByRole('button', { name: 'Verify' }).click();
      assert.equal((await response).status(), 404);
      const problem = page.locator('#trust-bundle .problem[data-code="AGENT_NOT_FOUND"]');
      await problem.waitFor();
      assert.match((await problem.textContent()) ?? '', /HTTP 404/);
      assert.equal(await page.locator('#trust-bundle [data-verdict]').count(), 0);
      await assertAccessible(page, 'unknown subject');
      assert.deepEqual(errors, []);
    });

    test('the signing key rotated through the browser, confirmed first; the API and the page show the new key', async (t) => {
      const stack = await startConsoleStack(t, backend);
      const agentId = await registerAgent(stack, 'Sepsis early warning');
      const [oldKid] = await publishedKids(stack);
      assert.ok(oldKid);
      const browser = await launchBrowser(t);
      const { page, errors } = await openPage(browser);

      await page.goto(stack.url('/trust'));
      await page.getByLabel('Keep the old public key published for').selectOption({ label: '7 days' });
      await page.getByRole('button', { name: 'Rotate the signing key…' }).click();
      assert.equal(await page.locator('h1').textContent(), 'Rotate the signing key?');
      assert.match((await page.locator('main form').textContent()) ?? '', new RegExp(`current key ${oldKid}`));
      assert.match((await page.locator('main form').textContent()) ?? '', /7 d 0 h/);
      await assertAccessible(page, 'rotation confirmation');
      await page.getByRole('button', { name: 'Rotate the signing key now' }).click();
      await page.waitForSelector('.notice-success');

      const kids = await publishedKids(stack);
      assert.equal(kids.length, 2, 'the old key stays published');
      const newKid = kids.find((kid) => kid !== oldKid);
      assert.ok(newKid, 'a new kid is published');
      const jwks = await stack.api.jwks();
      assert.ok(jwks.ok);
      const old = jwks.body.keys.find((key) => key.kid === oldKid);
      const retiresIn = Date.parse(String(old?.not_after)) - Date.now();
      assert.ok(retiresIn > 6.9 * 86_400_000 && retiresIn <= 7 * 86_400_000, `the old key retires in 7 days (${retiresIn} ms)`);

      assert.equal(new URL(page.url()).pathname, '/trust');
      assert.match((await page.locator('.notice-success').textContent()) ?? '', new RegExp(`now signs with key ${newKid} \\(ES256\\).*previous key ${oldKid} stays published until`));
      const newRow = page.locator(`#trust-jwks tr[data-kid="${newKid}"]`);
      assert.match((await newRow.textContent()) ?? '', /signs now/);
      assert.equal(await newRow.locator('.badge-valid').textContent(), 'current');
      assert.equal(await page.locator(`#trust-jwks tr[data-kid="${oldKid}"] .badge-expiring`).textContent(), 'retiring');
      assert.equal(await page.locator(`#trust-anchors tr[data-kid="${newKid}"]`).count(), 1);
      await assertAccessible(page, 'after rotation');

      // Bundles are signed with the new key from now on, and still verify against the registry's keys.
      await page.goto(stack.url(`/trust?subject=${encodeURIComponent(agentId)}`));
      assert.equal(await page.locator('#trust-bundle [data-verdict]').getAttribute('data-verdict'), 'verified');
      assert.match((await page.locator('#trust-bundle li[data-step-status]').last().textContent()) ?? '', new RegExp(`signed by ${newKid}`));

      // A rotation made elsewhere (through the API) appears on the open page without a reload.
      await waitForLive(page);
      await page.evaluate('window.loadedOnce = true');
      const rotated = await stack.api.rotateSigningKey({ alg: 'EdDSA' }, { idempotencyKey: randomUUID() });
      assert.ok(rotated.ok, rotated.ok ? '' : rotated.text);
      await page.locator(`#trust-jwks tr[data-kid="${rotated.body.key_id}"]`).waitFor({ timeout: 5000 });
      assert.equal(await page.evaluate('window.loadedOnce'), true, 'the page was not reloaded');
      assert.equal(await page.locator(`#trust-jwks tr[data-kid="${newKid}"] .badge`).last().textContent(), 'retiring');
      assert.deepEqual(errors, []);
    });
  });
}
