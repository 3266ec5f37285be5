/**
 * The console's access rules at the HTTP level, where a browser cannot be made to misbehave: sign-in
 * behind a TLS-terminating proxy, the `next` redirect kept on this console, the Host check of open
 * access (DNS rebinding), event streams ending with their session, and sessions surviving a flood of
 * anonymous visitors.
 */
import assert from 'node:assert/strict';
import { get as httpGet } from 'node:http';
import { describe, test } from 'node:test';
import type { Session } from 'fastify';
import { safeNext } from '../../src/console/access/access.ts';
import { BoundedSessionStore } from '../../src/console/access/session-store.ts';
import { AUDIENCE, ISSUER, makeSigningKey, signToken, startJwksServer, tokenClaims } from '../registry/credentials/fixtures.ts';
import { startConsoleStack, type ConsoleStack } from './console-harness.ts';

const cookieOf = (response: Response) => (response.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
const csrfOf = (page: string) => /name="_csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';

async function adminKey(stack: ConsoleStack): Promise<string> {
  const created = await stack.api.createApiKey({ org_id: 'org-ops', display_name: 'admin', scopes: ['registry:read', 'registry:write', 'registry:admin'] });
  assert.ok(created.ok && created.body.raw_key);
  return created.body.raw_key;
}

/** Signs in with plain HTTP requests; returns the session cookie. */
async function signIn(stack: ConsoleStack, key: string, headers: Record<string, string> = {}): Promise<{ status: number; cookie: string; location: string | null }> {
  const form = await fetch(stack.url('/sign-in'), { headers });
  const cookie = cookieOf(form);
  const response = await fetch(stack.url('/sign-in'), {
    method: 'POST',
    redirect: 'manual',
    headers: { ...headers, cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrfOf(await form.text()), credential: key, next: '/agents' }),
  });
  return { status: response.status, cookie: cookieOf(response) || cookie, location: response.headers.get('location') };
}

describe('console access over HTTP', () => {
  test('behind a TLS-terminating proxy: a Secure __Host- cookie, and sign-in works only through the trusted proxy', async (t) => {
    const stack = await startConsoleStack(t, 'sqlite', {
      consoleEnv: { REGISTRY_ENV: 'production', REGISTRY_AUTH_MODE: 'jwt', CONSOLE_ALLOWED_ORIGINS: 'https://console.example.org', CONSOLE_TRUST_PROXY: '127.0.0.1' },
    });
    const key = await adminKey(stack);
    const viaProxy = { 'x-forwarded-proto': 'https', origin: 'https://console.example.org' };
    const form = await fetch(stack.url('/sign-in'), { headers: viaProxy });
    const setCookie = form.headers.get('set-cookie') ?? '';
    assert.match(setCookie, /^__Host-ward_console=/);
    assert.match(setCookie, /; Secure/);
    assert.match(setCookie, /; HttpOnly/);
    assert.match(setCookie, /; SameSite=Strict/);
    assert.doesNotMatch(setCookie, /Expires|Max-Age/, 'a browser-session cookie');
    assert.equal(form.headers.get('strict-transport-security')?.startsWith('max-age='), true);

    const signedIn = await signIn(stack, key, viaProxy);
    assert.equal(signedIn.status, 303);
    assert.equal(signedIn.location, '/agents');
    const page = await fetch(stack.url('/agents'), { headers: { ...viaProxy, cookie: signedIn.cookie }, redirect: 'manual' });
    assert.equal(page.status, 200);

    // Straight to the console, not through TLS: no Secure cookie can be set, so no session.
    const direct = await fetch(stack.url('/sign-in'));
    assert.equal(direct.headers.get('set-cookie'), null);
  });

  test('after sign-in the console only sends people to its own pages', async (t) => {
    for (const bad of ['//evil.example/x', '/\\evil.example', '/\t/evil.example/x', '/%09/evil.example', 'https://evil.example', '/ok\r\nSet-Cookie: x=1', 'javascript:alert(1)']) {
      const next = safeNext(bad);
      assert.ok(next.startsWith('/') && !next.startsWith('//') && !/[\s\\]/.test(next), `${JSON.stringify(bad)} → ${next}`);
      assert.equal(new URL(next, 'https://console.example.org').origin, 'https://console.example.org', JSON.stringify(bad));
    }
    assert.equal(safeNext('/agents?status=active#list'), '/agents?status=active#list');
    assert.equal(safeNext(undefined), '/dashboard');

    const stack = await startConsoleStack(t, 'sqlite', { consoleEnv: { REGISTRY_AUTH_MODE: 'jwt' } });
    const key = await adminKey(stack);
    const form = await fetch(stack.url('/sign-in'));
    const response = await fetch(stack.url('/sign-in'), {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: cookieOf(form), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrfOf(await form.text()), credential: key, next: '/\t/evil.example/x' }),
    });
    assert.equal(response.status, 303);
    assert.equal(response.headers.get('location'), '/dashboard');
  });

  test('open access answers only to this machine’s names (DNS rebinding)', async (t) => {
    const stack = await startConsoleStack(t, 'sqlite');
    const port = new URL(stack.console.url).port;
    const rebound = await getWithHost(stack.url('/settings'), `attacker.example:${port}`);
    assert.equal(rebound.status, 403);
    assert.doesNotMatch(rebound.body, /_csrf/);
    assert.equal((await getWithHost(stack.url('/settings'), `localhost:${port}`)).status, 200);
    assert.equal((await getWithHost(stack.url('/settings'), `127.0.0.1:${port}`)).status, 200);
  });

  test("an open event stream ends when its session is signed out", { timeout: 60_000 }, async (t) => {
    const stack = await startConsoleStack(t, 'sqlite', { consoleEnv: { REGISTRY_AUTH_MODE: 'jwt' } });
    const key = await adminKey(stack);
    const { cookie } = await signIn(stack, key);
    const live = await fetch(stack.url('/live'), { headers: { cookie, accept: 'text/event-stream' } });
    assert.equal(live.status, 200);
    assert.match(live.headers.get('content-type') ?? '', /text\/event-stream/);
    const reader = (live.body as ReadableStream<Uint8Array>).getReader();
    const ended = (async () => {
      for (;;) if ((await reader.read()).done) return true;
    })();

    const page = await fetch(stack.url('/agents'), { headers: { cookie } });
    const signOut = await fetch(stack.url('/sign-out'), {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrfOf(await page.text()) }),
    });
    assert.equal(signOut.status, 303);
    assert.equal(await ended.catch(() => true), true);

    // Opening it again with the old cookie is told to sign in, as an event the page script reads.
    const again = await fetch(stack.url('/live'), { headers: { cookie } });
    assert.match(await again.text(), /event: ward-end\ndata: \{"status":401/);
  });

  test('in jwt mode a person signs in with an access token holding registry:admin, and only with one', async (t) => {
    const key = makeSigningKey('ES256');
    const jwks = await startJwksServer(t, [key]);
    const stack = await startConsoleStack(t, 'sqlite', {
      registryEnv: { REGISTRY_AUTH_MODE: 'jwt', REGISTRY_JWT_JWKS_URI: jwks.jwksUri, REGISTRY_JWT_ISSUER: ISSUER, REGISTRY_JWT_AUDIENCE: AUDIENCE },
      consoleEnv: { REGISTRY_AUTH_MODE: 'jwt' },
    });
    const now = Math.floor(Date.now() / 1000);
    const token = (claims: Record<string, unknown>) => signToken(key, tokenClaims({ iat: now, exp: now + 300, ...claims }));

    const admin = await signIn(stack, await token({ sub: 'ops-lead', scope: 'registry:read registry:admin' }));
    assert.equal(admin.status, 303);
    const page = await fetch(stack.url('/agents'), { headers: { cookie: admin.cookie }, redirect: 'manual' });
    assert.equal(page.status, 200);
    assert.match(await page.text(), /jwt:ops-lead/);

    const reader = await signIn(stack, await token({ sub: 'ward-reader', scope: 'registry:read' }));
    assert.equal(reader.status, 403);
    const expired = await signIn(stack, await token({ sub: 'ops-lead', scope: 'registry:read registry:admin', iat: now - 900, exp: now - 600 }));
    assert.equal(expired.status, 401);
  });

  test('a flood of anonymous sessions does not push a signed-in one out', (t) => {
    const store = new BoundedSessionStore({ maxAgeMs: 60_000, maxEntries: 3 });
    t.after(() => store.close());
    const put = (id: string, session: Record<string, unknown>) => store.set(id, session as unknown as Session, () => undefined);
    put('operator', { credential: 'rk_x' });
    for (let index = 0; index < 50; index += 1) put(`visitor-${index}`, {});
    let found: Session | null | undefined;
    store.get('operator', (_error, session) => (found = session));
    assert.ok(found, 'the operator is still signed in');
    assert.equal(store.size, 3);
  });
});

/** A GET with a Host header of our choosing (fetch does not let a caller set Host). */
function getWithHost(url: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpGet(url, { headers: { host } }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('error', reject);
  });
}
