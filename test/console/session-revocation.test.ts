/**
 * Bug pinned (issue 48, finding 1): a signed-in operator whose key was revoked kept a working console
 * session for up to CONSOLE_SESSION_MAX_HOURS: `/mesh` and `/try` still answered, and `POST
 * /try/tools/register` registered a new agent through the MCP tools, because only pages that called the
 * registry with the session's credential noticed. In Debian's Chromium, with a real sign-in and a real
 * revocation: an action is refused and ends the session at once; a read ends it within seconds; an
 * open page is sent to sign in without being touched.
 */
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import type { Page } from 'playwright-core';
import { createRegistryClient } from '../../src/client/registry-client.ts';
import type { Clock } from '../../src/core/clock.ts';
import { READ_VERDICT_MAX_AGE_MS } from '../../src/console/access/credential-check.ts';
import { createMcpServer } from '../../src/mcp/server.ts';
import { startHttpService } from '../../src/mcp/transports/http.ts';
import { BACKENDS } from '../helpers/registry.ts';
import { launchBrowser, NEEDS_CHROMIUM, openPage, startConsoleFor, startConsoleStack, type ConsoleStack } from './console-harness.ts';

const SIGN_IN = { REGISTRY_AUTH_MODE: 'jwt' };
const REVOKED_NOTICE = /no longer accepts the credential this session used/;

function movableClock(): Clock & { advance(ms: number): void } {
  let offset = 0;
  return { now: () => new Date(Date.now() + offset), advance: (ms) => void (offset += ms) };
}

async function adminKey(stack: ConsoleStack, name: string): Promise<{ raw: string; id: string }> {
  const answer = await stack.api.createApiKey({ org_id: 'org-ops', display_name: name, tier: 'enterprise', scopes: ['registry:read', 'registry:write', 'registry:admin'] });
  assert.ok(answer.ok && answer.body.raw_key, answer.text);
  return { raw: answer.body.raw_key, id: answer.body.key_id };
}

async function revoke(stack: ConsoleStack, key: { id: string }): Promise<void> {
  const answer = await stack.api.revokeApiKey(key.id);
  assert.ok(answer.ok, answer.ok ? '' : answer.text);
  // The registry refuses the key at once.
  assert.equal((await stack.api.as((key as { raw?: string }).raw).caller()).status, 401);
}

async function signIn(page: Page, url: (path: string) => string, key: { raw: string }, path: string): Promise<void> {
  await page.goto(url(`/sign-in?next=${encodeURIComponent(path)}`));
  await page.getByLabel('API key or access token').fill(key.raw);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((target) => `${target.pathname}${target.search}` === path);
}

async function assertSentToSignIn(page: Page, what: string): Promise<void> {
  assert.equal(new URL(page.url()).pathname, '/sign-in', what);
  assert.match((await page.locator('.notice').textContent()) ?? '', REVOKED_NOTICE, what);
}

async function startMcp(t: TestContext, registryUrl: string): Promise<string> {
  const registry = createRegistryClient({ baseUrl: registryUrl });
  const mcp = await startHttpService({ host: '127.0.0.1', port: 0, createServer: () => createMcpServer(registry), log: () => undefined });
  t.after(() => mcp.close());
  return `${mcp.url}/mcp`;
}

for (const backend of BACKENDS) {
  describe(`a revoked operator's console session [${backend}]`, NEEDS_CHROMIUM, () => {
    test('an action after the revocation is refused and ends the session: the MCP register tool registers nothing, a task message is not sent', async (t) => {
      const stack0 = await startConsoleStack(t, backend, { consoleEnv: SIGN_IN });
      // The same registry, a console that knows an MCP server (which would register for anyone who asks it).
      const mcpUrl = await startMcp(t, stack0.registry.baseUrl);
      const running = await startConsoleFor(stack0.scope, stack0.registry.baseUrl, { ...SIGN_IN, CONSOLE_MCP_URL: mcpUrl });
      const url = (path: string) => new URL(path, running.url).href;
      const stack = stack0;
      const browser = await launchBrowser(t);
      const { page, errors } = await openPage(browser);

      const first = { ...(await adminKey(stack, 'operator one')) };
      await signIn(page, url, first, '/try?tool=register');
      await page.locator('#tool-display_name').fill('Registered by a revoked operator');
      await page.locator('#tool-jurisdiction').fill('GB');
      await page.locator('#tool-endpoint_url').fill('https://agents.example.org/revoked');
      await page.locator('#tool-capabilities').fill('triage.assess');
      await revoke(stack, first);
      await page.locator('#try-tool-form button[type="submit"]').click();
      await page.waitForURL((target) => target.pathname === '/sign-in');
      await assertSentToSignIn(page, 'the tool call');
      const agents = await stack.api.listAgents({ limit: 100 });
      assert.ok(agents.ok);
      assert.deepEqual(agents.body.agents.map((agent) => agent.display_name), [], 'the MCP tool was never called');

      // A task message (or an answer to a task): posted with the form's own CSRF token, still refused.
      const second = { ...(await adminKey(stack, 'operator two')) };
      await signIn(page, url, second, '/try');
      const csrf = await page.locator('input[name="_csrf"]').first().getAttribute('value');
      await revoke(stack, second);
      const sent = await page.request.post(url('/try/send'), { form: { _csrf: csrf ?? '', agent: 'registry://gb/agents/01ARZ3NDEKTSV4RRFFQ69G5FAV', message: 'hello', answer: '' }, maxRedirects: 0 });
      assert.equal(sent.status(), 303);
      assert.match(sent.headers().location ?? '', /^\/sign-in\?.*reason=revoked/);
      // The session is over: the next page asks to sign in again, saying why.
      await page.goto(url('/mesh'));
      await assertSentToSignIn(page, 'after the refused message');
      assert.deepEqual(errors, []);
    });

    test('a read after the revocation ends the session within seconds: /mesh, /try, and an open page left alone', async (t) => {
      const clock = movableClock();
      const stack = await startConsoleStack(t, backend, { consoleEnv: SIGN_IN, clock });
      const browser = await launchBrowser(t);
      const { page, errors } = await openPage(browser);

      for (const path of ['/mesh', '/try']) {
        const key = await adminKey(stack, `reader of ${path}`);
        await signIn(page, stack.url, key, path);
        await revoke(stack, { ...key });
        // The console keeps the registry's word on a credential for a read no longer than this.
        clock.advance(READ_VERDICT_MAX_AGE_MS + 1);
        await page.goto(stack.url(path));
        await assertSentToSignIn(page, path);
      }

      // An open page whose person does nothing: its live stream asks again and the page goes to sign in.
      const idle = await adminKey(stack, 'left alone');
      await signIn(page, stack.url, idle, '/agents');
      await page.waitForSelector('#live-state[data-state="live"]');
      await revoke(stack, { ...idle });
      await page.waitForURL((target) => target.pathname === '/sign-in', { timeout: 60_000 });
      assert.match((await page.locator('.notice').textContent()) ?? '', REVOKED_NOTICE);
      assert.deepEqual(errors, []);
    });
  });
}

for (const backend of BACKENDS) {
  describe(`a revoked operator's open event stream [${backend}]`, () => {
    test('ends with a 401 for the page on its own, within seconds, though nothing else is asked; the session is then over', { timeout: 120_000 }, async (t) => {
      const stack = await startConsoleStack(t, backend, { consoleEnv: SIGN_IN });
      const key = await adminKey(stack, 'stream holder');
      const cookieOf = (response: Response) => (response.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
      const form = await fetch(stack.url('/sign-in'));
      const signedIn = await fetch(stack.url('/sign-in'), {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: cookieOf(form), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ _csrf: /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? '', credential: key.raw, next: '/agents' }),
      });
      assert.equal(signedIn.status, 303);
      const cookie = cookieOf(signedIn) || cookieOf(form);
      const live = await fetch(stack.url('/live'), { headers: { cookie, accept: 'text/event-stream' } });
      assert.equal(live.status, 200);
      const reader = (live.body as ReadableStream<Uint8Array>).getReader();
      const decoder = new TextDecoder();
      let text = '';
      const read = async (until: RegExp) => {
        while (!until.test(text)) {
          const chunk = await reader.read();
          if (chunk.done) break;
          text += decoder.decode(chunk.value, { stream: true });
        }
        return text;
      };
      await read(/event: ward-open/);
      await revoke(stack, { ...key });
      // Nothing is asked of the console meanwhile: the stream asks the registry again by itself.
      assert.match(await read(/event: ward-end\ndata: \{"status":401/), /event: ward-end\ndata: \{"status":401/);
      const after = await fetch(stack.url('/agents'), { headers: { cookie }, redirect: 'manual' });
      assert.equal(after.status, 303);
      assert.match(after.headers.get('location') ?? '', /^\/sign-in\?.*reason=revoked/);
    });
  });
}
