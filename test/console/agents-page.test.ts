/**
 * `/agents` in Debian's Chromium against a real registry: the table, search and pages, one agent's
 * record, a suspension carried out through the browser and checked through the API, a stale page's
 * 412 explained, and a change made through the API appearing on an open page without a reload.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { agentBody, BACKENDS } from '../helpers/registry.ts';
import { assertAccessible, launchBrowser, NEEDS_CHROMIUM, openPage, startConsoleStack, waitForLive, type ConsoleStack } from './console-harness.ts';

async function seed(stack: ConsoleStack, names: readonly string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const name of names) {
    const answer = await stack.api.registerAgent(agentBody({ display_name: name }) as never, { idempotencyKey: randomUUID() });
    assert.ok(answer.ok, answer.ok ? '' : answer.text);
    ids.push(answer.body.agent_id);
  }
  return ids;
}

const ulid = (agentId: string) => agentId.slice(agentId.lastIndexOf('/') + 1);

/** Where the screenshots go when AGENTS_SCREENSHOTS names a folder (looked at by people, not asserted). */
const SHOTS = process.env.AGENTS_SCREENSHOTS;

for (const backend of BACKENDS) {
  describe(`console /agents [${backend}]`, NEEDS_CHROMIUM, () => {
    test('list, search and pages; one record; suspend through the browser with a confirmation naming the agent', async (t) => {
      const stack = await startConsoleStack(t, backend);
      const names = Array.from({ length: 27 }, (_, index) => `Discharge planner ${String(index + 1).padStart(2, '0')}`);
      const ids = await seed(stack, names);
      const browser = await launchBrowser(t);
      const { page, errors } = await openPage(browser);

      await page.goto(stack.url('/agents'));
      assert.equal(await page.locator('h1').textContent(), 'Agents');
      assert.equal(await page.locator('#agent-list tbody tr').count(), 25);
      assert.match((await page.locator('#agent-list-title').textContent()) ?? '', /27 agents/);
      // Endpoints registered without a health_url say why they are never probed, rather than looking down.
      assert.match((await page.locator('#agent-list tbody tr td[data-label="Endpoints"]').first().textContent()) ?? '', /0\/1 healthy\s*1 not probed: no health URL/);
      await assertAccessible(page, '/agents');
      await page.getByRole('link', { name: 'Next page' }).click();
      assert.equal(await page.locator('#agent-list tbody tr').count(), 2);

      await page.goto(stack.url('/agents'));
      await page.getByLabel('Name or id').fill('planner 07');
      await page.getByRole('button', { name: 'Search' }).click();
      assert.equal(await page.locator('#agent-list tbody tr').count(), 1);
      await page.getByRole('link', { name: 'Discharge planner 07' }).click();
      assert.equal(await page.locator('h1').textContent(), 'Discharge planner 07');
      assert.match((await page.locator('#agent-record').textContent()) ?? '', /"1"/);
      assert.match((await page.locator('#agent-endpoints').textContent()) ?? '', /Not probed: the endpoint has no health URL \(no_health_url\)/);
      await assertAccessible(page, 'agent record');

      await page.getByRole('link', { name: 'Suspend' }).click();
      assert.equal(await page.locator('h1').textContent(), 'Suspend Discharge planner 07?');
      assert.match((await page.locator('main form').textContent()) ?? '', /Discharge planner 07/);
      await assertAccessible(page, 'confirmation');
      await page.getByLabel('Reason').fill('security review');
      await page.getByRole('button', { name: 'Suspend Discharge planner 07' }).click();
      await page.waitForSelector('.notice-success');
      assert.match((await page.locator('.notice-success').textContent()) ?? '', /Discharge planner 07 was suspended/);

      const after = await stack.api.getAgent(ids[6] as string);
      assert.ok(after.ok);
      assert.equal(after.body.status, 'suspended');
      assert.equal(after.body.status_reason, 'security review');
      assert.deepEqual(errors, []);
    });

    test('a stale confirmation gets the 412 explained and overwrites nothing', async (t) => {
      const stack = await startConsoleStack(t, backend);
      const [id] = await seed(stack, ['Medicines reconciler']);
      const browser = await launchBrowser(t);
      const { page, errors } = await openPage(browser);
      await page.goto(stack.url(`/agents/${ulid(id as string)}/suspend`));
      await page.getByLabel('Reason').fill('from the console');

      // Someone else acts first, through the API.
      const elsewhere = await stack.api.changeAgentStatus(id as string, 'suspend', 'from the API', { idempotencyKey: randomUUID() });
      assert.ok(elsewhere.ok);
      const reinstated = await stack.api.changeAgentStatus(id as string, 'reinstate', undefined, { idempotencyKey: randomUUID() });
      assert.ok(reinstated.ok);

      const response = page.waitForResponse((r) => r.request().method() === 'POST');
      await page.getByRole('button', { name: 'Suspend Medicines reconciler' }).click();
      assert.equal((await response).status(), 412);
      const problem = page.locator('.problem[data-code="PRECONDITION_FAILED"]');
      await problem.waitFor();
      assert.match((await problem.textContent()) ?? '', /changed this record since you opened it/);
      assert.equal(await page.locator('#agent-record .badge').first().textContent(), 'active');

      const now = await stack.api.getAgent(id as string);
      assert.ok(now.ok);
      assert.equal(now.body.status, 'active');
      assert.equal(now.body.version, 3);
      assert.deepEqual(errors, []);
    });

    test('a change made through the API appears on an open page without a reload', async (t) => {
      const stack = await startConsoleStack(t, backend);
      const [id] = await seed(stack, ['Sepsis screener']);
      const browser = await launchBrowser(t);
      const { page, errors } = await openPage(browser);
      await page.goto(stack.url(`/agents/${ulid(id as string)}`));
      await waitForLive(page);
      await page.evaluate('window.loadedOnce = true');
      const suspended = await stack.api.changeAgentStatus(id as string, 'suspend', 'paused by on-call', { idempotencyKey: randomUUID() });
      assert.ok(suspended.ok);
      await page.locator('#agent-record .badge', { hasText: 'suspended' }).waitFor({ timeout: 5000 });
      assert.equal(await page.evaluate('window.loadedOnce'), true, 'the page was not reloaded');
      assert.match((await page.locator('#agent-history').textContent()) ?? '', /agent\.suspended/);
      assert.deepEqual(errors, []);
    });
    test('a name mixing scripts, and one stored before the character rule, are shown with a warning in the list and on the record', async (t) => {
      // Bug pinned (issue 48, finding 4): `NНS Тriage` (Cyrillic Н and Т) was shown as given, with nothing to tell it from `NHS Triage`.
      const stack = await startConsoleStack(t, backend);
      const [plain, mixed, old] = await seed(stack, ['NHS Triage', 'N\u041DS \u0422riage (York)', 'Imported before the rule']);
      // A record stored before names were checked: a right-to-left override the registry now refuses.
      const stored = 'NHS Triage \u202Egnp.exe\u202C Official';
      await sql`update agents set display_name = ${stored}, record = replace(record, 'Imported before the rule', ${stored}) where id = ${ulid(old as string)}`.execute(stack.registry.storage.db);
      const browser = await launchBrowser(t);
      for (const width of [1280, 390]) {
        const { page, errors } = await openPage(browser, { width });
        await page.goto(stack.url('/agents'));
        const rowOf = (id: string) => page.locator(`#agent-list tr[data-agent-id="${id}"]`);
        assert.equal(await rowOf(plain as string).locator('[data-name-warning]').count(), 0, 'a plain name has no warning');
        assert.match((await rowOf(mixed as string).locator('[data-name-warning]').textContent()) ?? '', /Check the name\s+Mixes Latin and Cyrillic letters: it may be made to look like another name/);
        assert.match((await rowOf(old as string).locator('[data-name-warning]').textContent()) ?? '', /U\+202E, a bidirectional control character/);
        assert.equal(await rowOf(old as string).locator('bdi').count(), 1, 'the name cannot reorder the text around it');
        await assertAccessible(page, `/agents with warnings at ${width}px`);
        if (SHOTS) await page.screenshot({ path: `${SHOTS}/agents-name-warning-${backend}-${width}.png`, fullPage: true });

        await page.goto(stack.url(`/agents/${ulid(mixed as string)}`));
        const notice = page.locator('main .notice-warning[data-name-warning]');
        assert.match((await notice.textContent()) ?? '', /Check the agent's name:.*Mixes Latin and Cyrillic letters/s);
        await assertAccessible(page, `mixed-script record at ${width}px`);
        if (SHOTS) await page.screenshot({ path: `${SHOTS}/agent-name-warning-${backend}-${width}.png`, fullPage: true });
        await page.goto(stack.url(`/agents/${ulid(plain as string)}`));
        assert.equal(await page.locator('main [data-name-warning]').count(), 0);
        assert.deepEqual(errors, []);
      }
    });
  });
}
