/**
 * `/routing` in Debian's Chromium against a real registry: discovery by capability with the ranked
 * results, each score's breakdown and the signed answer verified by the console; a filter the registry
 * refuses, explained with the form kept; no match explained; routing advice by capability with the
 * chosen endpoint, the failover order and the signed advice verified; and a signature that does not
 * cover the answer shown, or no signature at all, said so.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { checkSignedAnswer } from '../../src/console/pages/routing-signature.ts';
import { agentBody, BACKENDS } from '../helpers/registry.ts';
import { assertAccessible, launchBrowser, NEEDS_CHROMIUM, openPage, startConsoleStack, type ConsoleStack } from './console-harness.ts';

async function seed(stack: ConsoleStack, overrides: Record<string, unknown>): Promise<string> {
  const answer = await stack.api.registerAgent(agentBody(overrides) as never, { idempotencyKey: randomUUID() });
  assert.ok(answer.ok, answer.ok ? '' : answer.text);
  return answer.body.agent_id;
}

const ulid = (agentId: string) => agentId.slice(agentId.lastIndexOf('/') + 1);

for (const backend of BACKENDS) {
  describe(`console /routing [${backend}]`, NEEDS_CHROMIUM, () => {
    test('discover: ranked results with the score breakdown and a verified signature; a refused filter; no match', async (t) => {
      const stack = await startConsoleStack(t, backend);
      const second = await seed(stack, {
        display_name: 'Chest pain triage',
        endpoints: [{ url: 'https://agents.example.org/chest', protocol: 'mesh-a2a-jsonrpc', priority: 50, region: 'uk-south' }],
      });
      const first = await seed(stack, {
        display_name: 'Stroke triage',
        endpoints: [{ url: 'https://agents.example.org/stroke', protocol: 'mesh-a2a-jsonrpc', priority: 1, region: 'uk-south' }],
      });
      await seed(stack, { display_name: 'Consent checker', capabilities: { protocols: ['mesh-a2a-jsonrpc'], skills: ['consent.verify'] } });
      const jwks = await stack.api.jwks();
      assert.ok(jwks.ok);
      const kid = String(jwks.body.keys[0]?.kid);

      const browser = await launchBrowser(t);
      const { page, errors } = await openPage(browser);
      await page.goto(stack.url('/routing'));
      assert.equal(await page.locator('h1').textContent(), 'Routing');
      await assertAccessible(page, '/routing (empty)');
      await page.getByLabel('Capability').fill('triage.assess');
      await page.getByRole('button', { name: 'Discover' }).click();
      await page.locator('#discovery-results tbody tr').first().waitFor();

      const rows = page.locator('#discovery-results tbody tr');
      assert.equal(await rows.count(), 2);
      assert.equal(await rows.nth(0).getAttribute('data-agent-id'), first);
      assert.equal(await rows.nth(1).getAttribute('data-agent-id'), second);
      assert.match((await page.locator('#discovery-results-title').textContent()) ?? '', /2 agents for triage\.assess/);
      // Priority 1 gives 999/101 = 9.891; priority 50 gives 999/150 = 6.66; GB is this registry's own jurisdiction.
      assert.match((await rows.nth(0).locator('[data-factor="priority"]').textContent()) ?? '', /9\.891.*best 1/);
      assert.match((await rows.nth(1).locator('[data-factor="priority"]').textContent()) ?? '', /6\.66.*best 50/);
      assert.match((await rows.nth(0).locator('[data-factor="jurisdiction"]').textContent()) ?? '', /10.*GB matches/);
      assert.match((await rows.nth(0).locator('[data-factor="health"]').textContent()) ?? '', /100.*unknown/);
      assert.match((await rows.nth(0).locator('td').nth(2).textContent()) ?? '', /^119\.891$/);

      const signature = page.locator('#discovery-signature [data-signature]');
      assert.equal(await signature.getAttribute('data-signature'), 'verified');
      assert.match((await signature.textContent()) ?? '', /Signature verified/);
      assert.match((await signature.textContent()) ?? '', new RegExp(kid));
      assert.match((await signature.textContent()) ?? '', /ward-discovery\+jwt/);
      assert.match(page.url(), /\/routing\?capability=triage\.assess/);
      await assertAccessible(page, '/routing results');

      // A filter the registry refuses: its problem, field by field, and the form as it was.
      await page.getByLabel('Jurisdiction').fill('ZZ');
      const refused = page.waitForResponse((response) => response.url().includes('/routing?'));
      await page.getByRole('button', { name: 'Discover' }).click();
      assert.equal((await refused).status(), 422);
      const problem = page.locator('.problem[data-code="VALIDATION_ERROR"]');
      await problem.waitFor();
      assert.match((await page.locator('#registry-refusal').textContent()) ?? '', /Jurisdiction.*must be an assigned ISO 3166-1 alpha-2 code/);
      assert.equal(await page.getByLabel('Capability').inputValue(), 'triage.assess');
      assert.equal(await page.getByLabel('Jurisdiction').inputValue(), 'ZZ');
      assert.equal(await page.getByLabel('Jurisdiction').getAttribute('aria-invalid'), 'true');
      await assertAccessible(page, '/routing refused');

      // No match: said so, with what was asked.
      await page.getByLabel('Jurisdiction').fill('');
      await page.getByLabel('Capability').fill('wound.assess');
      await page.getByRole('button', { name: 'Discover' }).click();
      await page.locator('#discovery-results .empty').waitFor();
      assert.match((await page.locator('#discovery-results .empty').textContent()) ?? '', /No agent matches the capability wound\.assess/);
      assert.match((await page.locator('#discovery-results-title').textContent()) ?? '', /^0 agents/);

      // A result leads to the agent's record.
      await page.goto(stack.url('/routing?capability=triage.assess&features=&purpose_of_use=treatment'));
      await page.getByRole('link', { name: 'Stroke triage', exact: true }).click();
      await page.waitForURL(`**/agents/${ulid(first)}`);
      assert.equal(await page.locator('h1').textContent(), 'Stroke triage');
      assert.deepEqual(errors, []);
    });

    test('route by capability: the chosen endpoint, failover, evidence, trust bundle link and the verified signed advice', async (t) => {
      const stack = await startConsoleStack(t, backend);
      const agentId = await seed(stack, {
        display_name: 'Sepsis screener',
        endpoints: [
          { url: 'https://agents.example.org/sepsis-backup', protocol: 'mesh-a2a-jsonrpc', priority: 20, region: 'uk-west' },
          { url: 'https://agents.example.org/sepsis', protocol: 'mesh-a2a-jsonrpc', priority: 1, region: 'uk-south' },
        ],
        capabilities: { protocols: ['mesh-a2a-jsonrpc'], skills: ['sepsis.screen'] },
      });
      const browser = await launchBrowser(t);
      const { page, errors } = await openPage(browser);

      // From a discovery result to the advice for it.
      await page.goto(stack.url('/routing?capability=sepsis.screen'));
      await page.getByRole('link', { name: 'Routing advice for this capability' }).click();
      await page.locator('#route-advice').waitFor();
      assert.equal(await page.locator('h1').textContent(), 'Routing advice');
      assert.equal(await page.getByLabel('Capability').inputValue(), 'sepsis.screen');
      assert.match((await page.locator('#route-advice-title').textContent()) ?? '', /Sepsis screener/);
      assert.equal(await page.locator('#route-selected code').first().textContent(), 'https://agents.example.org/sepsis');
      assert.match((await page.locator('#route-alternatives').textContent()) ?? '', /sepsis-backup/);
      assert.match((await page.locator('#route-advice').textContent()) ?? '', /registry:\/\/gb\/registries\//);
      const bundleLink = page.getByRole('link', { name: "Verify this agent's trust bundle" });
      assert.equal(await bundleLink.getAttribute('href'), `/trust?subject=${encodeURIComponent(agentId)}`);
      const signature = page.locator('#route-signature [data-signature]');
      assert.equal(await signature.getAttribute('data-signature'), 'verified');
      assert.match((await signature.textContent()) ?? '', /ward-routing\+jwt/);
      await assertAccessible(page, '/routing/route advice');

      // Typed into the form: a protocol no endpoint speaks gets NO_ROUTE, explained.
      await page.getByLabel('Protocol').fill('fhir-rest');
      await page.getByRole('button', { name: 'Ask again' }).click();
      await page.locator('.problem[data-code="NO_ROUTE"]').waitFor();
      assert.equal(await page.getByLabel('Protocol').inputValue(), 'fhir-rest');

      // Both a capability and a target: the registry's rule, shown against the request as a whole.
      await page.getByLabel('Protocol').fill('');
      await page.getByLabel('Target agent').fill(agentId);
      await page.getByRole('button', { name: 'Ask again' }).click();
      await page.locator('.problem[data-code="VALIDATION_ERROR"]').waitFor();
      assert.match((await page.locator('#registry-refusal').textContent()) ?? '', /exactly one of target \(or target_agent_id\) or capability is required/);
      await assertAccessible(page, '/routing/route refused');

      // By target alone.
      await page.getByLabel('Capability').fill('');
      await page.getByRole('button', { name: 'Ask again' }).click();
      await page.locator('#route-selected').waitFor();
      assert.match((await page.locator('#route-selected').textContent()) ?? '', /Sepsis screener/);
      assert.deepEqual(errors, []);
    });

    test('a signature over another answer is not verified; an unsigned answer is said to be unsigned', async (t) => {
      const stack = await startConsoleStack(t, backend);
      await seed(stack, { display_name: 'Discharge planner' });
      const [discovery, route, jwks] = await Promise.all([stack.api.discover({ capability: 'triage.assess' }), stack.api.route({ capability: 'triage.assess' }), stack.api.jwks()]);
      assert.ok(discovery.ok && route.ok && jwks.ok);
      const now = new Date();
      assert.equal((await checkSignedAnswer(discovery.text, 'discovery', jwks, now)).state, 'verified');
      assert.equal((await checkSignedAnswer(route.text, 'routing', jwks, now)).state, 'verified');

      const altered = await checkSignedAnswer(discovery.text.replace('Discharge planner', 'Discharge plannex'), 'discovery', jwks, now);
      assert.equal(altered.state, 'failed');
      assert.match(altered.reason ?? '', /covers a different answer/);
      const swapped = await checkSignedAnswer(route.text, 'discovery', jwks, now);
      assert.equal(swapped.state, 'failed');
      assert.match(swapped.reason ?? '', /typed ward-routing\+jwt, not ward-discovery\+jwt/);
      const otherKeys = await checkSignedAnswer(route.text, 'routing', { ...jwks, body: { keys: [] } }, now);
      assert.equal(otherKeys.state, 'failed');
      assert.match(otherKeys.reason ?? '', /does not verify/);

      const unsigned = await startConsoleStack(t, backend, { registryEnv: { REGISTRY_SIGN_RESPONSES: 'false' } });
      await seed(unsigned, { display_name: 'Unsigned triage' });
      const browser = await launchBrowser(t);
      const { page, errors } = await openPage(browser);
      await page.goto(unsigned.url('/routing?capability=triage.assess'));
      const signature = page.locator('#discovery-signature [data-signature]');
      assert.equal(await signature.getAttribute('data-signature'), 'unsigned');
      assert.match((await signature.textContent()) ?? '', /Not signed.*REGISTRY_SIGN_RESPONSES=false/s);
      assert.deepEqual(errors, []);
    });
  });
}
