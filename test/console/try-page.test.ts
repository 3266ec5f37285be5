/**
 * `/try` in Debian's Chromium against a real registry, a real mesh gateway with a real agent process
 * and a real MCP server over streamable HTTP: an agent picked from discovery with its routing advice,
 * a test message sent through the gateway and its states streaming in to completed, a message with an
 * NHS number refused by the gateway's PHI guard with its explanation, MCP tools called through forms
 * built from their schemas (an answer and an error), and an MCP server and a gateway that are not
 * there. axe at 1280 and 390 px.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, test, type TestContext } from 'node:test';
import { SignJWT } from 'jose';
import type { Page } from 'playwright-core';
import { createRegistryClient } from '../../src/client/registry-client.ts';
import { createMcpServer } from '../../src/mcp/server.ts';
import { startHttpService } from '../../src/mcp/transports/http.ts';
import { startTestGateway } from '../mesh/gateway/gateway-helpers.ts';
import { AxeBuilder } from '@axe-core/playwright';
import { agentBody, BACKENDS } from '../helpers/registry.ts';
import { assertAccessible, launchBrowser, NEEDS_CHROMIUM, openPage, startConsoleFor, startConsoleStack, type ConsoleStack } from './console-harness.ts';

const SKILL = 'try.echo';
/** Where the screenshots go when TRY_SCREENSHOTS names a folder (looked at by people, not asserted). */
const SHOTS = process.env.TRY_SCREENSHOTS;

/** axe at WCAG 2.x A and AA finds nothing at all on the page as it is now (of any impact), besides the harness's check. */
async function assertNoWcagViolation(page: Page, label: string): Promise<void> {
  await assertAccessible(page, label);
  const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa']).analyze();
  assert.deepEqual(results.violations.map((violation) => `${violation.id} (${violation.impact}): ${violation.nodes.map((node) => node.target.join(' ')).join('; ')}`), [], `${label}: WCAG A/AA violations`);
}

async function startMcp(t: TestContext, registryUrl: string): Promise<string> {
  const registry = createRegistryClient({ baseUrl: registryUrl });
  const mcp = await startHttpService({ host: '127.0.0.1', port: 0, createServer: () => createMcpServer(registry), log: () => undefined });
  t.after(() => mcp.close());
  return `${mcp.url}/mcp`;
}

async function seedAgent(stack: ConsoleStack, gatewayUrl: string, alias: string, name: string): Promise<string> {
  const answer = await stack.api.registerAgent(
    agentBody({
      display_name: name,
      endpoints: [{ url: `${gatewayUrl}/rpc/${alias}/`, protocol: 'mesh-a2a-jsonrpc', priority: 10 }],
      capabilities: { protocols: ['mesh-a2a-jsonrpc'], skills: [SKILL] },
    }) as never,
    { idempotencyKey: randomUUID() },
  );
  assert.ok(answer.ok, answer.ok ? '' : answer.text);
  return answer.body.agent_id;
}

for (const backend of BACKENDS) {
  describe(`console /try [${backend}]`, NEEDS_CHROMIUM, () => {
    test('an agent picked from discovery, its advice, a test message seen completing, a PHI message refused, MCP tools called', async (t) => {
      const gateway = await startTestGateway(t, { probe: { entry: 'probe' } });
      // The harness's console knows no MCP server; the one this test drives is pointed at the MCP server of the same registry.
      const stack0 = await startConsoleStack(t, backend, { consoleEnv: { GATEWAY_URL: gateway.url } });
      const mcpUrl = await startMcp(t, stack0.registry.baseUrl);
      const running = await startConsoleFor(stack0.scope, stack0.registry.baseUrl, { GATEWAY_URL: gateway.url, CONSOLE_MCP_URL: mcpUrl });
      const url = (path: string) => new URL(path, running.url).href;
      const agentId = await seedAgent(stack0, gateway.url, 'probe', 'Echo probe');

      const browser = await launchBrowser(t);
      const { page, errors } = await openPage(browser);
      await page.goto(url('/try'));
      assert.equal(await page.locator('h1').textContent(), 'Try an agent');
      assert.equal(await page.locator('nav[aria-label="Console pages"] a[aria-current="page"]').textContent(), 'Try');
      assert.match((await page.locator('#try-advice').textContent()) ?? '', /Pick an agent above/);
      assert.match((await page.locator('#try-task').textContent()) ?? '', /Send a test message: its task shows here/);
      await assertNoWcagViolation(page, '/try empty');

      // Pick from discovery, by keyboard: type the capability, Enter, then follow the agent's link.
      await page.locator('#try-capability').fill(SKILL);
      await page.locator('#try-capability').press('Enter');
      const pick = page.locator(`#try-agents li[data-agent-id="${agentId}"] a`);
      await pick.waitFor();
      await pick.focus();
      await page.keyboard.press('Enter');
      await page.locator('#try-endpoint').waitFor();
      assert.equal((await page.locator('#try-endpoint').textContent())?.trim(), `${gateway.url}/rpc/probe/`);
      assert.match((await page.locator('#try-advice').textContent()) ?? '', /the gateway's agent probe/);
      assert.equal(await page.locator(`#try-agents li[data-agent-id="${agentId}"] a`).getAttribute('aria-current'), 'true');
      await assertNoWcagViolation(page, '/try with an agent picked');
      if (SHOTS) await page.screenshot({ path: `${SHOTS}/try-picked-1280.png`, fullPage: true });

      // A test message through the gateway: its states stream in, and the status turns completed.
      await page.locator('#try-message').fill('hello from the console');
      await page.locator('#try-send-form button[type="submit"]').click();
      await page.locator('#try-task-states li[data-state="completed"]').waitFor({ timeout: 20_000 });
      const states = await page.locator('#try-task-states li').evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.state));
      assert.ok(states.includes('working'), `states streamed: ${states.join(', ')}`);
      assert.equal(states.at(-1), 'completed');
      await page.locator('#try-task-status[data-state="completed"]').waitFor({ timeout: 8000 });
      assert.match((await page.locator('#try-task-said').textContent()) ?? '', /probe probe: hello from the console/);
      await assertNoWcagViolation(page, '/try with a task completed');
      if (SHOTS) await page.screenshot({ path: `${SHOTS}/try-task-1280.png`, fullPage: true });

      // The PHI guard: a message carrying an NHS number is refused by the gateway, with its explanation.
      const sends = async () => ((await (await fetch(`${gateway.url}/tasks`)).json()) as { recent: Array<{ method: string }> }).recent.filter((task) => task.method === 'tasks/send').length;
      const before = await sends();
      await page.locator('#try-message').fill('Patient NHS number 943 476 5919 has chest pain');
      await page.locator('#try-send-form button[type="submit"]').click();
      const refusal = page.locator('#try-refusal');
      await refusal.waitFor();
      assert.equal(await refusal.getAttribute('data-code'), '-32012');
      assert.equal(await refusal.getAttribute('role'), 'alert');
      assert.match((await refusal.textContent()) ?? '', /PHI guard refused this message/);
      assert.match((await page.locator('#try-phi-findings').textContent()) ?? '', /nhs/i);
      assert.doesNotMatch((await refusal.textContent()) ?? '', /943 476 5919|9434765919/, 'the refusal does not repeat the value');
      assert.equal(await page.locator('#try-message').inputValue(), 'Patient NHS number 943 476 5919 has chest pain', 'the message is kept to be mended');
      assert.equal(await sends(), before, 'nothing reached the agent');
      assert.equal(await page.locator('#try-task-status').getAttribute('data-state'), 'completed', 'the task sent before stays shown');
      await assertNoWcagViolation(page, '/try with a PHI refusal');
      if (SHOTS) await page.screenshot({ path: `${SHOTS}/try-phi-1280.png`, fullPage: true });

      // MCP: the discover_agents form built from its schema, called; then route with an unknown agent, an error.
      await page.goto(url('/try?tool=discover_agents'));
      assert.equal(await page.locator('#tool-protocol').evaluate((element) => element.tagName), 'SELECT', 'an enum is a select');
      assert.equal(await page.locator('#tool-limit').getAttribute('max'), '100');
      assert.equal(await page.locator('#tool-capability').getAttribute('required'), '');
      await page.locator('#tool-capability').fill(SKILL);
      await page.locator('#tool-limit').fill('5');
      await page.locator('#try-tool-form button[type="submit"]').click();
      const result = page.locator('#try-tool-result');
      await result.waitFor();
      assert.equal(await result.getAttribute('data-outcome'), 'ok');
      const json = JSON.parse((await result.locator('pre').textContent()) ?? '{}');
      assert.equal(json.results[0].agent_id, agentId);
      assert.equal(json.query.limit, 5);
      assert.equal(await page.locator('#tool-capability').inputValue(), SKILL, 'the form keeps what was typed');
      await assertNoWcagViolation(page, '/try with a tool result');

      await page.locator('nav[aria-label="MCP tools"] a[href*="tool=route"]').click();
      await page.locator('#tool-target_agent_id').fill('registry://gb/agents/01ARZ3NDEKTSV4RRFFQ69G5FAV');
      await page.locator('#try-tool-form button[type="submit"]').click();
      await page.locator('#try-tool-result[data-outcome="error"]').waitFor();
      assert.match((await page.locator('#try-tool-result').textContent()) ?? '', /AGENT_NOT_FOUND|NOT_FOUND/);

      const narrow = await openPage(browser, { width: 390, height: 844 });
      await narrow.page.goto(url(`/try?capability=${SKILL}&agent=${encodeURIComponent(agentId)}`));
      await assertNoWcagViolation(narrow.page, '/try at 390 px');
      const overflow = (await narrow.page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')) as number;
      assert.ok(overflow <= 1, `/try at 390 px scrolls sideways by ${overflow}px`);
      if (SHOTS) await narrow.page.screenshot({ path: `${SHOTS}/try-picked-390.png`, fullPage: true });
      await narrow.page.locator('#try-message').fill('NHS number 943 476 5919');
      await narrow.page.locator('#try-send-form button[type="submit"]').click();
      await narrow.page.locator('#try-refusal[data-code="-32012"]').waitFor();
      await narrow.page.locator('#tool-capability').fill(SKILL);
      await narrow.page.locator('#try-tool-form button[type="submit"]').click();
      await narrow.page.locator('#try-tool-result[data-outcome="ok"]').waitFor();
      await assertNoWcagViolation(narrow.page, '/try at 390 px with a tool result');
      const overflowAfter = (await narrow.page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')) as number;
      assert.ok(overflowAfter <= 1, `/try at 390 px with a tool result scrolls sideways by ${overflowAfter}px`);
      assert.deepEqual([...errors, ...narrow.errors], []);
    });

    test("signed in, with a gateway that has a real mesh secret: the development token is refused with what to do; the operator's own token sends, and only this session follows the task", async (t) => {
      const secret = 'a-real-mesh-secret-of-at-least-32-bytes';
      const gateway = await startTestGateway(t, { probe: { entry: 'probe' } }, { env: { MESH_JWT_SECRET: secret } });
      const stack = await startConsoleStack(t, backend, { consoleEnv: { REGISTRY_AUTH_MODE: 'jwt', GATEWAY_URL: gateway.url, CONSOLE_MCP_URL: 'http://127.0.0.1:9/mcp' } });
      const admin = await stack.api.createApiKey({ org_id: 'org-ops', display_name: 'try page operator', scopes: ['registry:read', 'registry:write', 'registry:admin'] as never });
      assert.ok(admin.ok && admin.body.raw_key, admin.text);
      const rawKey = admin.body.raw_key;
      const signIn = async (target: Page, path: string) => {
        await target.goto(stack.url(path));
        await target.getByLabel('API key or access token').fill(rawKey);
        await target.getByRole('button', { name: 'Sign in' }).click();
        await target.waitForURL((url) => url.pathname === '/try');
      };
      const agentId = await seedAgent(stack, gateway.url, 'probe', 'Secret probe');
      const browser = await launchBrowser(t);
      const { page, errors } = await openPage(browser);
      await signIn(page, `/try?capability=${SKILL}&agent=${encodeURIComponent(agentId)}`);
      await page.locator('#try-message').fill('hello with a development token');
      await page.locator('#try-send-form button[type="submit"]').click();
      const refusal = page.locator('#try-refusal');
      await refusal.waitFor();
      assert.equal(await refusal.getAttribute('data-code'), '-32001');
      assert.match((await refusal.textContent()) ?? '', /refused the credential/);
      assert.match((await refusal.textContent()) ?? '', /does not take development tokens.*Paste a mesh token of your own/s);
      assert.match((await refusal.textContent()) ?? '', /bad_signature/);

      // Not a token at all: refused by the console before anything is sent.
      await page.locator('#try-token').fill('not-a-token');
      await page.locator('#try-send-form button[type="submit"]').click();
      await page.locator('#try-refusal').waitFor();
      assert.match((await page.locator('#try-refusal').textContent()) ?? '', /not a JWT with a subject/);

      const sub = 'did:web:localhost:agents:operator';
      const iat = Math.floor(Date.now() / 1000);
      const own = await new SignJWT({ scope: 'mesh:invoke' }).setProtectedHeader({ alg: 'HS256' }).setSubject(sub).setIssuedAt(iat).setExpirationTime(iat + 600).sign(new TextEncoder().encode(secret));
      await page.locator('#try-token').fill(own);
      await page.locator('#try-send-form button[type="submit"]').click();
      await page.locator('#try-task-states li[data-state="completed"]').waitFor({ timeout: 20_000 });
      await page.locator('#try-task-status[data-state="completed"]').waitFor({ timeout: 8000 });
      assert.equal(await page.locator('#try-token').inputValue(), '', 'the token is not sent back to the browser');
      assert.ok(!(await page.content()).includes(own), 'nor written in the page');
      await assertNoWcagViolation(page, '/try signed in, with a task');
      assert.deepEqual(errors, []);

      // Another session of the same person holds no credential for the task: its stream says so.
      const taskId = new URL(page.url()).searchParams.get('task') ?? '';
      const other = await openPage(browser);
      await signIn(other.page, '/try');
      const answer = (await other.page.evaluate(async (url) => (await fetch(url)).text(), `/try/tasks/${encodeURIComponent(taskId)}/events`)) as string;
      assert.match(answer, /event: task-error\ndata: .*not sent from this session/);
      assert.doesNotMatch(answer, /completed/);
    });

    test('the shipped triage agent asks for vital signs; the task is answered from the page and followed through both turns to completed', async (t) => {
      const triage = fileURLToPath(new URL('../../src/mesh/agents/triage/index.ts', import.meta.url));
      const gateway = await startTestGateway(t, { triage: { entry: triage } });
      const stack = await startConsoleStack(t, backend, { consoleEnv: { GATEWAY_URL: gateway.url, CONSOLE_MCP_URL: 'http://127.0.0.1:9/mcp' } });
      const agentId = await seedAgent(stack, gateway.url, 'triage', 'Triage under test');
      const browser = await launchBrowser(t);
      const { page, errors } = await openPage(browser);
      await page.goto(stack.url(`/try?capability=${SKILL}&agent=${encodeURIComponent(agentId)}`));
      // The page offers triage's example (complaint and vital signs); this test sends the complaint alone.
      assert.match((await page.locator('#try-example-note').textContent()) ?? '', /example for triage/);
      await page.locator('#try-message').fill('chest pain');
      await page.locator('#try-data').fill('');
      await page.locator('#try-send-form button[type="submit"]').click();
      await page.locator('#try-task-states li[data-state="input-required"]').waitFor({ timeout: 30_000 });
      await page.locator('#try-task-status[data-state="input-required"]').waitFor({ timeout: 8000 });
      assert.match((await page.locator('#try-task-said').textContent()) ?? '', /vital signs/);
      // The send form follows without a reload: it offers to answer the task.
      const answer = page.getByRole('button', { name: 'Answer the task' });
      await answer.waitFor({ timeout: 8000 });
      assert.match((await page.locator('#try-answer-note').textContent()) ?? '', /waiting for input/);
      const taskId = new URL(page.url()).searchParams.get('task');
      await page.locator('#try-message').fill('vital signs as asked');
      await page.locator('#try-data').fill(JSON.stringify({ vital_signs: { heart_rate: 118, respiratory_rate: 22, oxygen_saturation: 94, systolic_bp: 105, consciousness: 'alert', temperature_c: 37.2 } }));
      await answer.click();
      await page.locator('#try-task-states li[data-state="completed"]').waitFor({ timeout: 30_000 });
      assert.equal(new URL(page.url()).searchParams.get('task'), taskId, 'the same task, answered');
      const states = await page.locator('#try-task-states li').evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.state));
      assert.ok(states.indexOf('input-required') >= 0 && states.indexOf('input-required') < states.indexOf('completed'), `both turns streamed: ${states.join(', ')}`);
      await page.locator('#try-task-status[data-state="completed"]').waitFor({ timeout: 8000 });
      assert.match((await page.locator('#try-task-status').textContent()) ?? '', /triage-assessment/);
      await page.locator('#try-task-states[data-ended="true"]').waitFor();
      await assertNoWcagViolation(page, '/try with an answered task');
      assert.deepEqual(errors, []);
    });

    test("each shipped agent's example is filled in; triage's, sent as it is, completes in one turn", async (t) => {
      const triage = fileURLToPath(new URL('../../src/mesh/agents/triage/index.ts', import.meta.url));
      const gateway = await startTestGateway(t, { triage: { entry: triage } });
      const stack = await startConsoleStack(t, backend, { consoleEnv: { GATEWAY_URL: gateway.url, CONSOLE_MCP_URL: 'http://127.0.0.1:9/mcp' } });
      const agentId = await seedAgent(stack, gateway.url, 'triage', 'Triage example');
      const browser = await launchBrowser(t);
      const { page, errors } = await openPage(browser);
      await page.goto(stack.url(`/try?capability=${SKILL}&agent=${encodeURIComponent(agentId)}`));
      assert.equal(await page.locator('#try-message').inputValue(), 'chest pain');
      assert.match(await page.locator('#try-data').inputValue(), /"vital_signs"/);
      await page.locator('#try-send-form button[type="submit"]').click();
      await page.locator('#try-task-states li[data-state="completed"]').waitFor({ timeout: 30_000 });
      const states = await page.locator('#try-task-states li').evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.state));
      assert.ok(!states.includes('input-required'), `one turn: ${states.join(', ')}`);
      if (SHOTS) {
        mkdirSync(SHOTS, { recursive: true });
        await page.setViewportSize({ width: 1280, height: 900 });
        await page.screenshot({ path: `${SHOTS}/try-example-1280.png`, fullPage: true });
      }
      assert.deepEqual(errors, []);
    });

    test('an MCP server and a gateway that cannot be reached are said so; a task of another session is not followed', async (t) => {
      const stack = await startConsoleStack(t, backend, { consoleEnv: { GATEWAY_URL: 'http://127.0.0.1:9', CONSOLE_MCP_URL: 'http://127.0.0.1:9/mcp' } });
      const agentId = await seedAgent(stack, 'http://127.0.0.1:9', 'probe', 'Unreachable probe');
      const browser = await launchBrowser(t);
      const { page, errors } = await openPage(browser);
      await page.goto(stack.url(`/try?capability=${SKILL}&agent=${encodeURIComponent(agentId)}&task=not-mine`));
      assert.match((await page.locator('#try-mcp-unreachable').textContent()) ?? '', /MCP server could not be reached at http:\/\/127\.0\.0\.1:9\/mcp/);
      assert.match((await page.locator('#try-task').textContent()) ?? '', /not sent from this session/);
      await page.locator('#try-message').fill('hello');
      await page.locator('#try-send-form button[type="submit"]').click();
      await page.locator('#try-refusal').waitFor();
      assert.equal(await page.locator('#try-refusal').getAttribute('data-code'), '-32011');
      assert.match((await page.locator('#try-refusal').textContent()) ?? '', /gateway could not be reached at http:\/\/127\.0\.0\.1:9/);
      await assertNoWcagViolation(page, '/try without a gateway or MCP server');
      assert.deepEqual(errors, []);
    });
  });
}

if (SHOTS) mkdirSync(SHOTS, { recursive: true });
