/**
 * `/audit` in Debian's Chromium against a real registry: the signed tree head verified by the console,
 * the entries page by page, an entry's inclusion proved step by step through the browser, the
 * current head checked to extend an earlier one the console recorded, and an entry altered in the
 * database caught by its inclusion proof.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { agentBody, BACKENDS } from '../helpers/registry.ts';
import { assertAccessible, launchBrowser, NEEDS_CHROMIUM, openPage, startConsoleStack, type ConsoleStack } from './console-harness.ts';

/** Registers agents; each registration appends two ledger entries (registered, trust_validated). */
async function seed(stack: ConsoleStack, count: number, prefix = 'Ledgered agent'): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    const answer = await stack.api.registerAgent(agentBody({ display_name: `${prefix} ${i + 1}` }) as never, { idempotencyKey: randomUUID() });
    assert.ok(answer.ok, answer.ok ? '' : answer.text);
  }
}

for (const backend of BACKENDS) {
  describe(`console /audit [${backend}]`, NEEDS_CHROMIUM, () => {
    test('tree head verified, entries paginated, inclusion proved in the browser, consistency with an earlier head', async (t) => {
      const stack = await startConsoleStack(t, backend);
      await seed(stack, 14);
      const jwks = await stack.api.jwks();
      assert.ok(jwks.ok);
      const kid = String(jwks.body.keys[0]?.kid);
      const browser = await launchBrowser(t);
      const { page, errors } = await openPage(browser);

      await page.goto(stack.url('/audit'));
      assert.equal(await page.locator('h1').textContent(), 'Audit');
      const head = page.locator('#audit-head [data-verdict]');
      assert.equal(await head.getAttribute('data-verdict'), 'verified');
      assert.match((await head.textContent()) ?? '', /Tree head verified/);
      assert.match((await head.textContent()) ?? '', new RegExp(kid));
      assert.equal(await page.locator('#audit-head [data-tree-size]').getAttribute('data-tree-size'), '28');
      assert.match((await page.locator('#audit-entries-title').textContent()) ?? '', /28 in all/);
      assert.equal(await page.locator('#audit-entries tbody tr').count(), 25);
      const firstRow = page.locator('#audit-entries tbody tr').first();
      // The ledger keeps identifiers, not names (free text is a digest there): the name is the
      // registry's, looked up as the page is drawn, with the agent's id beneath.
      assert.match((await firstRow.textContent()) ?? '', /agent\.registered/);
      assert.equal((await firstRow.locator('a[href^="/agents/"]').textContent())?.trim(), 'Ledgered agent 1');
      assert.match((await firstRow.locator('a[href^="/agents/"] + br + code').textContent()) ?? '', /^[0-9A-Z]{26}$/);
      assert.doesNotMatch((await page.locator('#audit-entries').textContent()) ?? '', /sha256:/);
      assert.match((await firstRow.locator('code[title]').getAttribute('title')) ?? '', /^[0-9a-f]{64}$/);
      assert.match((await page.locator('#audit-consistency').textContent()) ?? '', /No earlier head yet/);
      await assertAccessible(page, '/audit');

      await page.getByRole('link', { name: 'Next page' }).click();
      await page.waitForURL('**/audit?cursor=*');
      assert.equal(await page.locator('#audit-entries tbody tr').count(), 3);
      await page.getByRole('link', { name: 'Check inclusion of leaf 26' }).click();
      await page.waitForURL('**/audit/entries/26');
      assert.equal(await page.locator('h1').textContent(), 'Ledger entry 26');
      const verdict = page.locator('#inclusion-verdict');
      assert.equal(await verdict.getAttribute('data-verdict'), 'verified');
      assert.match((await verdict.textContent()) ?? '', /Inclusion verified.*Leaf 26 is in the signed tree/);
      assert.match((await page.locator('#leaf-text').textContent()) ?? '', /^\{"data":\{.*"type":"agent\.registered"\}$/);
      assert.doesNotMatch((await page.locator('#leaf-text').textContent()) ?? '', /Ledgered agent/, 'the ledger itself holds no name');
      // Leaf 26 of 28: its sibling 27, then the subtrees 24–25, 16–23 and 0–15.
      const steps = page.locator('#proof-steps tbody tr');
      assert.deepEqual(await steps.locator('td:nth-child(3)').allTextContents(), ['27', '24–25', '16–23', '0–15']);
      await assertAccessible(page, 'inclusion proof');

      // The ledger grows; the head seen before is now an earlier head the console can check against.
      await seed(stack, 1, 'Later agent');
      await page.goto(stack.url('/audit'));
      assert.equal(await page.locator('#audit-head [data-tree-size]').getAttribute('data-tree-size'), '30');
      await page.getByLabel('Earlier tree head').selectOption({ label: (await page.locator('#from option', { hasText: /^28 entries, / }).textContent()) ?? '' });
      await page.getByRole('button', { name: 'Check consistency' }).click();
      const result = page.locator('#consistency-result');
      await result.waitFor();
      assert.equal(await result.getAttribute('data-verdict'), 'verified');
      assert.match((await result.textContent()) ?? '', /consistency 28 → 30: the current log extends the earlier one/);
      assert.match(page.url(), /\/audit\?from=28-[0-9a-f]{64}$/);
      await assertAccessible(page, 'consistency');
      assert.deepEqual(errors, []);
    });

    test('an entry altered in the database fails its inclusion proof in the page', async (t) => {
      const stack = await startConsoleStack(t, backend);
      await seed(stack, 2);
      // Leaf 1 is the first agent's trust validation at level 0; an attacker with database access raises it.
      await stack.registry.storage.db
        .updateTable('ledger_leaves')
        .set((eb) => ({ entry: eb.fn('replace', [eb.ref('entry'), eb.val('"level":0'), eb.val('"level":3')]) }))
        .where('leaf_index', '=', 1)
        .execute();
      const browser = await launchBrowser(t);
      const { page, errors } = await openPage(browser);

      await page.goto(stack.url('/audit/entries/1'));
      const verdict = page.locator('#inclusion-verdict');
      assert.equal(await verdict.getAttribute('data-verdict'), 'failed');
      assert.match((await verdict.textContent()) ?? '', /Inclusion FAILED.*it was altered/);
      assert.match((await page.locator('#leaf-text').textContent()) ?? '', /"level":3/);
      assert.match((await page.locator('#inclusion-steps').textContent()) ?? '', /The registry lists a different hash/);
      assert.match((await page.locator('#inclusion-steps').textContent()) ?? '', /They differ\./);
      await assertAccessible(page, 'failed inclusion proof');

      // Its neighbour is untouched and still proves.
      await page.goto(stack.url('/audit'));
      await page.getByRole('link', { name: 'Check inclusion of leaf 0' }).click();
      await page.waitForURL('**/audit/entries/0');
      assert.equal(await page.locator('#inclusion-verdict').getAttribute('data-verdict'), 'verified');
      assert.deepEqual(errors, []);
    });
  });
}
