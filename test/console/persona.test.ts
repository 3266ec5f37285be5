/**
 * Computer-use personas are permissions the console enforces (docs/computer-use.md): a session signed
 * in as a read-only persona can post nothing but sign-out, even once the header is gone; the header
 * on a person's own session takes rights away, never adds them; an operator acts as the credential
 * allows.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startConsoleStack, type ConsoleStack } from './console-harness.ts';

const cookieOf = (response: Response) => (response.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
const csrfOf = (page: string) => /name="_csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';

async function adminKey(stack: ConsoleStack): Promise<string> {
  const created = await stack.api.createApiKey({
    org_id: 'org-ops',
    display_name: 'admin',
    scopes: ['registry:read', 'registry:write', 'registry:admin'],
  });
  assert.ok(created.ok && created.body.raw_key);
  return created.body.raw_key;
}

async function signIn(stack: ConsoleStack, key: string, headers: Record<string, string>): Promise<string> {
  const form = await fetch(stack.url('/sign-in'), { headers });
  const response = await fetch(stack.url('/sign-in'), {
    method: 'POST',
    redirect: 'manual',
    headers: { ...headers, cookie: cookieOf(form), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrfOf(await form.text()), credential: key, next: '/settings' }),
  });
  assert.equal(response.status, 303);
  return cookieOf(response) || cookieOf(form);
}

/** Posts the settings page's new-key form in a session; answers the status and the page. */
async function createKey(
  stack: ConsoleStack,
  cookie: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  const page = await fetch(stack.url('/settings/keys/new'), { headers: { ...headers, cookie } });
  assert.equal(page.status, 200);
  cookie ||= cookieOf(page);
  const response = await fetch(stack.url('/settings/keys'), {
    method: 'POST',
    redirect: 'manual',
    headers: { ...headers, cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      _csrf: csrfOf(await page.text()),
      org_id: 'org-x',
      display_name: 'made by a persona',
      tier: 'developer',
      scopes: 'registry:read',
      idempotency_key: crypto.randomUUID(),
    }),
  });
  return { status: response.status, body: await response.text() };
}

async function keyNames(stack: ConsoleStack): Promise<string[]> {
  const list = await stack.api.listApiKeys({});
  assert.ok(list.ok);
  return list.body.api_keys.map((key) => key.display_name);
}

describe('console: computer-use personas', () => {
  test('a read-only persona, bound at sign-in, can change nothing even without the header; an operator can', async (t) => {
    const stack = await startConsoleStack(t, 'sqlite', { consoleEnv: { REGISTRY_AUTH_MODE: 'jwt' } });
    const key = await adminKey(stack);

    const auditor = await signIn(stack, key, { 'x-ward-persona': 'auditor' });
    const banner = await (await fetch(stack.url('/dashboard'), { headers: { cookie: auditor } })).text();
    assert.match(banner, /Computer use, persona auditor:/);
    for (const headers of [{ 'x-ward-persona': 'auditor' }, {}, { 'x-ward-persona': 'operator' }] as Record<
      string,
      string
    >[]) {
      const refused = await createKey(stack, auditor, headers);
      assert.equal(refused.status, 403, JSON.stringify(headers));
      assert.match(
        refused.body,
        /persona <strong>auditor<\/strong>, which is read-only: nothing was changed/,
      );
    }
    assert.ok(!(await keyNames(stack)).includes('made by a persona'));

    // A person's own session named read-only by a header is refused too; without it, it acts.
    const person = await signIn(stack, key, {});
    assert.equal((await createKey(stack, person, { 'x-ward-persona': 'clinician' })).status, 403);
    assert.equal(
      (await createKey(stack, person, { 'x-ward-persona': 'made-up' })).status,
      403,
      'an unknown persona is read-only',
    );
    assert.equal((await createKey(stack, person)).status, 201);

    const operator = await signIn(stack, key, { 'x-ward-persona': 'operator' });
    assert.match(
      await (
        await fetch(stack.url('/dashboard'), { headers: { cookie: operator, 'x-ward-persona': 'operator' } })
      ).text(),
      /this session may act on the registry/,
    );
    assert.equal((await createKey(stack, operator, { 'x-ward-persona': 'operator' })).status, 201);
    assert.equal((await keyNames(stack)).filter((name) => name === 'made by a persona').length, 2);

    // Sign-out stays open to a read-only session.
    const dashboard = await (await fetch(stack.url('/dashboard'), { headers: { cookie: auditor } })).text();
    const out = await fetch(stack.url('/sign-out'), {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: auditor, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrfOf(dashboard) }),
    });
    assert.equal(out.status, 303);
    assert.equal(out.headers.get('location'), '/sign-in?reason=signed_out');
  });

  test('open access (development): the header alone makes a browser read-only', async (t) => {
    const stack = await startConsoleStack(t, 'sqlite');
    const refused = await createKey(stack, '', { 'x-ward-persona': 'security-analyst' });
    assert.equal(refused.status, 403);
    assert.match(refused.body, /security-analyst/);
    assert.equal((await createKey(stack, '')).status, 201);
  });
});
