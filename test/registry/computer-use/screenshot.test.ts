/**
 * `GET /v1/admin/computer-use/screenshot` against a real registry and the real console, in Debian's
 * Chromium: a PNG of each of the ten pages; the console's sign-in passed with the caller's own key;
 * origins outside the allowed list refused; a missing browser is a 503 naming it. And the browser's
 * origin filter: a page that reaches for another origin gets nothing from it.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { describe, test } from 'node:test';
import { createRegistryClient } from '../../../src/client/registry-client.ts';
import { createConsoleBrowser } from '../../../src/computer-use/console-browser.ts';
import { CONSOLE_PAGES } from '../../../src/registry/computer-use/computer-use-service.ts';
import { CHROMIUM, NEEDS_CHROMIUM, startConsoleFor } from '../../console/console-harness.ts';
import { startRegistries, testScope } from '../../helpers/listening.ts';

/** Width and height from a PNG's IHDR chunk, after checking the signature. */
function pngSize(bytes: Buffer): { width: number; height: number } {
  assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'PNG signature');
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

describe('computer use: screenshot of a console page', NEEDS_CHROMIUM, () => {
  test('each console page as a 1280×800 PNG; refused origins, pages and scopes', async (t) => {
    const scope = testScope(t);
    const [registry] = await startRegistries(scope, 'sqlite');
    assert.ok(registry);
    const console = await startConsoleFor(scope, registry.baseUrl);
    registry.app.ward.computerUse.setConsoleOrigin(console.url);
    const shot = (query: string, headers: Record<string, string> = {}) => fetch(`${registry.baseUrl}/v1/admin/computer-use/screenshot?${query}`, { headers });

    for (const page of CONSOLE_PAGES) {
      const response = await shot(`page=${page}`);
      assert.equal(response.status, 200, page);
      assert.equal(response.headers.get('content-type'), 'image/png');
      assert.deepEqual(pngSize(Buffer.from(await response.arrayBuffer())), { width: 1280, height: 800 }, page);
    }

    const elsewhere = await shot(`page=agents&base_url=${encodeURIComponent('http://169.254.169.254/latest/meta-data')}`);
    assert.equal(elsewhere.status, 422);
    const refusal = (await elsewhere.json()) as any;
    assert.equal(refusal.error.code, 'URL_NOT_ALLOWED');
    assert.deepEqual(refusal.error.details.allowed, [new URL(console.url).origin]);

    const unknownPage = await shot('page=billing');
    assert.equal(unknownPage.status, 422);
    assert.equal(((await unknownPage.json()) as any).error.code, 'VALIDATION_ERROR');

    const api = createRegistryClient({ baseUrl: registry.baseUrl });
    const reader = await api.createApiKey({ org_id: 'org-ops', display_name: 'reader', scopes: ['registry:read'] });
    assert.ok(reader.ok && reader.body.raw_key);
    const refused = await shot('page=agents', { authorization: `Bearer ${reader.body.raw_key}` });
    assert.equal(refused.status, 403);
    assert.equal(((await refused.json()) as any).error.code, 'INSUFFICIENT_SCOPE');
  });

  test("a console that asks for sign-in is signed in to with the caller's own admin key", async (t) => {
    const scope = testScope(t);
    const [registry] = await startRegistries(scope, 'sqlite');
    assert.ok(registry);
    const console = await startConsoleFor(scope, registry.baseUrl, { REGISTRY_AUTH_MODE: 'jwt' });
    registry.app.ward.computerUse.setConsoleOrigin(console.url);
    const api = createRegistryClient({ baseUrl: registry.baseUrl });
    const admin = await api.createApiKey({ org_id: 'org-ops', display_name: 'admin', scopes: ['registry:read', 'registry:admin'] });
    assert.ok(admin.ok && admin.body.raw_key);
    const response = await fetch(`${registry.baseUrl}/v1/admin/computer-use/screenshot?page=settings`, { headers: { 'x-api-key': admin.body.raw_key } });
    assert.equal(response.status, 200);
    assert.deepEqual(pngSize(Buffer.from(await response.arrayBuffer())), { width: 1280, height: 800 });
    // Anonymous (auth disabled at the registry, so allowed there) cannot pass the console's sign-in.
    const anonymous = await fetch(`${registry.baseUrl}/v1/admin/computer-use/screenshot?page=settings`);
    assert.equal(anonymous.status, 503);
    assert.equal(((await anonymous.json()) as any).error.code, 'DEPENDENCY_UNAVAILABLE');
  });

  test('without a browser: 503 DEPENDENCY_UNAVAILABLE naming it, with an install hint', async (t) => {
    const scope = testScope(t);
    const [registry] = await startRegistries(scope, 'sqlite', { env: { CHROMIUM_PATH: '/nonexistent/chromium' } });
    assert.ok(registry);
    const response = await fetch(`${registry.baseUrl}/v1/admin/computer-use/screenshot?page=dashboard`);
    assert.equal(response.status, 503);
    const body = (await response.json()) as any;
    assert.equal(body.error.code, 'DEPENDENCY_UNAVAILABLE');
    assert.deepEqual(body.error.details.missing, ['browser']);
    assert.match(body.error.details.hint, /apt-get install chromium/);
  });

  test('the browser refuses every request to an origin outside the allowed list', async (t) => {
    let reached = 0;
    const other = createServer((_request, response) => {
      reached += 1;
      response.end('secret');
    });
    const otherOrigin = await listen(other);
    const page = `<!doctype html><title>probe</title><img src="${otherOrigin}/pixel.png"><script>fetch('${otherOrigin}/steal').then(() => document.title = 'reached', () => document.title = 'blocked')</script>`;
    const site = createServer((_request, response) => response.setHeader('content-type', 'text/html').end(page));
    const siteOrigin = await listen(site);
    t.after(() => {
      other.close();
      site.close();
    });
    const browser = createConsoleBrowser({ chromiumPath: CHROMIUM });
    t.after(() => browser.close());
    const session = await browser.open({ consoleOrigin: siteOrigin, allowedOrigins: [siteOrigin] });
    t.after(() => session.close());
    await session.page.goto(siteOrigin);
    await session.page.waitForFunction('document.title !== "probe"');
    assert.equal(await session.page.title(), 'blocked');
    assert.equal(reached, 0);
    assert.ok(session.blocked.some(({ url }) => url.startsWith(`${otherOrigin}/steal`)));
    assert.ok(session.blocked.some(({ url }) => url.startsWith(`${otherOrigin}/pixel.png`)));
  });
});
