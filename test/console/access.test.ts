/**
 * Who may use the console (docs/console.md, "Access"), in Debian's Chromium against a real registry:
 * the sign-in refuses a bad and a non-admin credential and admits an admin key; the session cookie is
 * HttpOnly and SameSite=Strict; a form posted without its CSRF token, with a wrong one, or from another
 * origin is refused; an expired session and a revoked key send the person back to sign in; sign-out
 * ends the session. In development the console opens without sign-in under a banner.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import type { Clock } from '../../src/core/clock.ts';
import { agentBody } from '../helpers/registry.ts';
import { assertAccessible, contentOutsideLandmarks, launchBrowser, NEEDS_CHROMIUM, openPage, startConsoleStack, type ConsoleStack } from './console-harness.ts';

/** A console that asks for sign-in: it is told the registry runs with authentication (the registry checks every key presented). */
const SIGN_IN = { REGISTRY_AUTH_MODE: 'jwt', CONSOLE_SESSION_IDLE_MINUTES: '30', CONSOLE_SESSION_MAX_HOURS: '12' };

async function key(stack: ConsoleStack, scopes: string[]): Promise<{ raw: string; id: string }> {
  const answer = await stack.api.createApiKey({ org_id: 'org-ops', display_name: `console ${scopes.join(' ')}`, scopes: scopes as never });
  assert.ok(answer.ok && answer.body.raw_key, answer.text);
  return { raw: answer.body.raw_key, id: answer.body.key_id };
}

function movableClock(): Clock & { advance(ms: number): void } {
  let offset = 0;
  return { now: () => new Date(Date.now() + offset), advance: (ms) => void (offset += ms) };
}

describe('console access', NEEDS_CHROMIUM, () => {
  test('sign-in refuses an unknown and a non-admin credential, admits an admin key, and signs out', async (t) => {
    const stack = await startConsoleStack(t, 'sqlite', { consoleEnv: SIGN_IN });
    const reader = await key(stack, ['registry:read']);
    const admin = await key(stack, ['registry:read', 'registry:write', 'registry:admin']);
    const browser = await launchBrowser(t);
    const { page, errors } = await openPage(browser);

    await page.goto(stack.url('/agents?status=active'));
    assert.equal(new URL(page.url()).pathname, '/sign-in');
    assert.equal(await page.locator('h1').textContent(), 'Sign in');
    assert.equal(await page.locator('.banner').count(), 0, 'no development banner');
    await assertAccessible(page, 'sign-in');

    await page.getByLabel('API key or access token').fill(`rk_${'x'.repeat(40)}`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    assert.match((await page.locator('#sign-in-error').textContent()) ?? '', /did not accept this credential/);

    await page.getByLabel('API key or access token').fill(reader.raw);
    await page.getByRole('button', { name: 'Sign in' }).click();
    assert.match((await page.locator('#sign-in-error').textContent()) ?? '', /holds registry:read; the console needs registry:admin/);

    await page.getByLabel('API key or access token').fill(admin.raw);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => url.pathname === '/agents');
    assert.equal(new URL(page.url()).search, '?status=active', 'back where the person was going');
    assert.match((await page.locator('.viewer').textContent()) ?? '', new RegExp(admin.id));
    const html = await page.content();
    assert.ok(!html.includes(admin.raw), 'the raw key never reaches the page');

    const [cookie] = await page.context().cookies();
    assert.equal(cookie?.name, 'ward_console');
    assert.equal(cookie?.httpOnly, true);
    assert.equal(cookie?.sameSite, 'Strict');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL((url) => url.pathname === '/sign-in');
    assert.match((await page.locator('.notice').textContent()) ?? '', /signed out/);
    await page.goto(stack.url('/dashboard'));
    assert.equal(new URL(page.url()).pathname, '/sign-in');
    assert.deepEqual(errors, []);
  });

  test('forms without their CSRF token, with a wrong one, or from another origin are refused and change nothing', async (t) => {
    const stack = await startConsoleStack(t, 'sqlite');
    const registered = await stack.api.registerAgent(agentBody({ display_name: 'Wound photo triage' }) as never, { idempotencyKey: randomUUID() });
    assert.ok(registered.ok);
    const ulid = registered.body.agent_id.split('/').pop() as string;
    const browser = await launchBrowser(t);
    const { page } = await openPage(browser);
    await page.goto(stack.url(`/agents/${ulid}/suspend`));
    const token = await page.locator('input[name="_csrf"]').first().inputValue();
    const etag = await page.locator('input[name="etag"]').inputValue();
    const form = { etag, reason: 'forged', idempotency_key: randomUUID() };

    const missing = await page.request.post(stack.url(`/agents/${ulid}/suspend`), { form });
    assert.equal(missing.status(), 403);
    assert.match(await missing.text(), /no valid security token/);
    const wrong = await page.request.post(stack.url(`/agents/${ulid}/suspend`), { form: { ...form, _csrf: `${token.slice(0, -4)}AAAA` } });
    assert.equal(wrong.status(), 403);
    const elsewhere = await page.request.post(stack.url(`/agents/${ulid}/suspend`), { form: { ...form, _csrf: token }, headers: { origin: 'https://attacker.example' } });
    assert.equal(elsewhere.status(), 403);
    assert.match(await elsewhere.text(), /sent from another site/);

    const after = await stack.api.getAgent(ulid);
    assert.ok(after.ok);
    assert.equal(after.body.status, 'active');
    assert.equal(after.body.version, 1);

    // The same form with its token goes through: the refusals above were about the token alone.
    const good = await page.request.post(stack.url(`/agents/${ulid}/suspend`), { form: { ...form, _csrf: token }, maxRedirects: 0 });
    assert.equal(good.status(), 303);
  });

  test('an idle session expires, and a key revoked meanwhile ends the session', async (t) => {
    const clock = movableClock();
    const stack = await startConsoleStack(t, 'sqlite', { consoleEnv: { ...SIGN_IN, CONSOLE_SESSION_IDLE_MINUTES: '5' }, clock });
    const admin = await key(stack, ['registry:read', 'registry:write', 'registry:admin']);
    const browser = await launchBrowser(t);
    const { page, errors } = await openPage(browser);
    const signIn = async () => {
      await page.goto(stack.url('/sign-in'));
      await page.getByLabel('API key or access token').fill(admin.raw);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL((url) => url.pathname === '/dashboard');
    };

    await signIn();
    clock.advance(4 * 60_000);
    await page.goto(stack.url('/settings'));
    assert.equal(new URL(page.url()).pathname, '/settings', 'activity within the idle time keeps the session');
    clock.advance(6 * 60_000);
    await page.goto(stack.url('/agents'));
    assert.equal(new URL(page.url()).pathname, '/sign-in');
    assert.match((await page.locator('.notice').textContent()) ?? '', /session expired/);

    await signIn();
    const revoked = await stack.api.revokeApiKey(admin.id);
    assert.ok(revoked.ok);
    await page.goto(stack.url('/agents'));
    assert.equal(new URL(page.url()).pathname, '/sign-in');
    assert.match((await page.locator('.notice').textContent()) ?? '', /no longer accepts the credential/);
    assert.deepEqual(errors, []);
  });

  test('in development the console opens without sign-in and says so', async (t) => {
    const stack = await startConsoleStack(t, 'sqlite');
    const browser = await launchBrowser(t);
    const { page, errors } = await openPage(browser);
    const response = await page.goto(stack.url('/'));
    assert.equal(new URL(page.url()).pathname, '/dashboard');
    assert.match((await page.locator('.banner').textContent()) ?? '', /open without sign-in/);
    assert.match((await page.getByRole('region', { name: 'Access' }).textContent()) ?? '', /Development mode/);
    assert.deepEqual(await contentOutsideLandmarks(page), [], 'the banner sits in a landmark like the rest of the page');
    const csp = response?.headers()['content-security-policy'] ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.equal(response?.headers()['x-frame-options'], 'SAMEORIGIN');
    assert.deepEqual(errors, []);
  });
});
