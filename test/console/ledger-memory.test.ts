/**
 * The tree heads the console remembers (../../src/console/pages/audit-memory.ts and the ledger alert
 * of ../../src/console/alerts/alert-rules.ts): heads it verified while they were current, kept as
 * size and root, so an emergency key rotation (the old key withdrawn at once) neither raises a false
 * "ledger does not verify" alert nor breaks `/audit`'s consistency check from an earlier head; and
 * checks that overlap never move the remembered head back to an older one.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { createRegistryClient } from '../../src/client/registry-client.ts';
import { collectAlerts } from '../../src/console/alerts/alert-rules.ts';
import { MAX_HEADS, recordedHeads, rememberHead } from '../../src/console/pages/audit-memory.ts';
import { rewriteLedgerHistory } from '../helpers/ledger-tamper.ts';
import { startRegistries, testScope } from '../helpers/listening.ts';
import { agentBody, BACKENDS } from '../helpers/registry.ts';
import { launchBrowser, NEEDS_CHROMIUM, openPage, startConsoleStack, type ConsoleStack } from './console-harness.ts';

async function seed(stack: Pick<ConsoleStack, 'api'>, count: number, prefix: string): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    const answer = await stack.api.registerAgent(agentBody({ display_name: `${prefix} ${i + 1}` }) as never, { idempotencyKey: randomUUID() });
    assert.ok(answer.ok, answer.ok ? '' : answer.text);
  }
}

async function treeSize(stack: Pick<ConsoleStack, 'api'>): Promise<number> {
  const head = await stack.api.treeHead();
  assert.ok(head.ok);
  return head.body.tree_size;
}

describe('audit memory', () => {
  test('heads are kept in order of size whatever order checks finish in, one per size and root, the smallest dropped first', () => {
    const url = `http://heads-${randomUUID()}.invalid`;
    const head = (treeSize: number, byte = treeSize) => ({ treeSize, rootHash: new Uint8Array(32).fill(byte), timestamp: new Date(treeSize * 1000).toISOString(), kid: `kid-${byte}` });
    for (const size of [4, 9, 6, 9, 2]) rememberHead(url, head(size));
    rememberHead(url, head(6, 200)); // a fork: another root at a size already seen
    assert.deepEqual(recordedHeads(url).map((h) => [h.tree_size, h.root_hash.slice(0, 2), h.kid]), [
      [2, '02', 'kid-2'],
      [4, '04', 'kid-4'],
      [6, '06', 'kid-6'],
      [6, 'c8', 'kid-200'],
      [9, '09', 'kid-9'],
    ]);
    // One more than fit: the head of 2 goes.
    for (let size = 10; size < 10 + MAX_HEADS - 4; size += 1) rememberHead(url, head(size, size % 256));
    const kept = recordedHeads(url);
    assert.equal(kept.length, MAX_HEADS);
    assert.equal(kept[0]?.tree_size, 4, 'the smallest went first');
    assert.equal(kept.at(-1)?.tree_size, 5 + MAX_HEADS);
  });
});

for (const backend of BACKENDS) {
  describe(`console ledger memory [${backend}]`, () => {
    test('after a rotation that withdraws the old key at once: no ledger alert, and /audit still proves consistency from the earlier head', NEEDS_CHROMIUM, async (t) => {
      const stack = await startConsoleStack(t, backend);
      await seed(stack, 2, 'Before rotation');
      const before = await treeSize(stack);
      const oldKeys = await stack.api.jwks();
      assert.ok(oldKeys.ok);
      const oldKid = String(oldKeys.body.keys[0]?.kid);
      const browser = await launchBrowser(t);
      const { page, errors } = await openPage(browser);

      // The console verifies (and remembers) the head signed by the old key.
      await page.goto(stack.url('/audit'));
      assert.equal(await page.locator('#audit-head [data-verdict]').getAttribute('data-verdict'), 'verified');
      assert.match((await page.locator('#audit-head').textContent()) ?? '', new RegExp(oldKid));
      await page.goto(stack.url('/alerts'));
      assert.equal(await page.locator('#alert-list tr[data-alert-id="ledger_unverified"]').count(), 0);

      const rotated = await stack.api.rotateSigningKey({ retire_after_seconds: 0 }, { idempotencyKey: randomUUID() });
      assert.ok(rotated.ok, rotated.ok ? '' : rotated.text);
      const newKeys = await stack.api.jwks();
      assert.ok(newKeys.ok);
      assert.deepEqual(newKeys.body.keys.map((key) => key.kid), [rotated.body.key_id], 'the old key is withdrawn at once');
      await seed(stack, 1, 'After rotation');
      const after = await treeSize(stack);
      assert.ok(after > before);

      // Checked twice: from the head remembered before the rotation, then from the one after it.
      for (let check = 0; check < 2; check += 1) {
        await page.goto(stack.url('/alerts'));
        assert.equal(await page.locator('#alert-list tr[data-alert-id="ledger_unverified"]').count(), 0, `no ledger alert (check ${check + 1})`);
        assert.match((await page.locator('#alert-list .empty').textContent()) ?? '', /No open alert: none of the conditions/);
      }

      await page.goto(stack.url('/audit'));
      assert.equal(await page.locator('#audit-head [data-verdict]').getAttribute('data-verdict'), 'verified');
      assert.match((await page.locator('#audit-head').textContent()) ?? '', new RegExp(rotated.body.key_id));
      assert.equal(await page.locator('#audit-head [data-tree-size]').getAttribute('data-tree-size'), String(after));
      const earlier = page.locator('#from option', { hasText: new RegExp(`^${before} entries, `) });
      await page.getByLabel('Earlier tree head').selectOption({ label: (await earlier.textContent()) ?? '' });
      await page.getByRole('button', { name: 'Check consistency' }).click();
      const result = page.locator('#consistency-result');
      await result.waitFor();
      assert.equal(await result.getAttribute('data-verdict'), 'verified', (await result.textContent()) ?? '');
      assert.match((await result.textContent()) ?? '', new RegExp(`consistency ${before} → ${after}: the current log extends the earlier one`));
      assert.deepEqual(errors, []);
    });

    test('overlapping checks never move the remembered head back; a rewritten history is still caught', async (t) => {
      const scope = testScope(t);
      const [registry] = await startRegistries(scope, backend);
      assert.ok(registry);
      const api = createRegistryClient({ baseUrl: registry.baseUrl });
      const stack = { api };
      /** A client of the same registry (so the same memory) whose requests go through `intercept`. */
      const clientWith = (intercept: (url: string, init: RequestInit | undefined) => Promise<Response> | undefined) =>
        createRegistryClient({ baseUrl: registry.baseUrl, fetch: async (input, init) => (await intercept(String(input), init)) ?? fetch(input, init) });
      const ledgerAlertOf = async (client = api) => (await collectAlerts(client)).alerts.find((alert) => alert.rule === 'ledger_unverified');

      await seed(stack, 2, 'First');
      assert.equal(await ledgerAlertOf(), undefined); // remembers the head of 4
      await seed(stack, 1, 'Second');
      const stale = await api.treeHead(); // the head of 6
      assert.ok(stale.ok);
      await seed(stack, 1, 'Third');
      const newest = await treeSize(stack);
      assert.equal(newest, 8);

      // A check that read the head of 6 finishes after one that read the head of 8.
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      // The slow check has sent its request for the head (so it remembered the head of 4 then) before
      // the other check starts: its answer, the head of 6, is simply slow to arrive.
      let reached!: () => void;
      const asking = new Promise<void>((resolve) => (reached = resolve));
      const slow = clientWith((url) => {
        if (!url.endsWith('/v1/transparency/sth')) return undefined;
        reached();
        return gate.then(() => Response.json(stale.body));
      });
      const slowCheck = ledgerAlertOf(slow);
      await asking;
      assert.equal(await ledgerAlertOf(), undefined);
      release();
      assert.equal(await slowCheck, undefined);

      // The next check starts from the head of 8, not 6.
      const asked: string[] = [];
      const watched = clientWith((url) => {
        asked.push(new URL(url).pathname + new URL(url).search);
        return undefined;
      });
      await seed(stack, 1, 'Fourth');
      assert.equal(await ledgerAlertOf(watched), undefined);
      assert.deepEqual(asked.filter((path) => path.startsWith('/v1/transparency/proof/consistency')), ['/v1/transparency/proof/consistency?first=8&second=10']);

      // Leaf 0 changed and every hash rebuilt to match, the heads re-signed: the remembered head catches it.
      await rewriteLedgerHistory(registry.storage);
      await seed(stack, 1, 'Fifth');
      const alert = await ledgerAlertOf();
      assert.ok(alert, 'the rewrite raises the alert');
      assert.match(alert.detail, /consistency 10 → 12: the current log does not extend the earlier one/);
      // It stays open, from the same start, while the log does not extend the head verified before.
      const again = await ledgerAlertOf();
      assert.equal(again?.since, alert.since);
      assert.match(again?.detail ?? '', /consistency 10 → 12/);
    });
  });
}
