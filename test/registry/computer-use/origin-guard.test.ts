/**
 * Computer use stays on its origins and never hands out the administrator's credential (issue 28,
 * items 1–3), with Debian's Chromium, a real registry and console, and loopback servers:
 *
 * - "allowed" is an origin on COMPUTER_USE_ALLOWED_ORIGINS whose pages try every way off it (an HTTP
 *   redirect, a meta refresh, `window.location`, `window.open`, a download, a WebSocket, a service
 *   worker); "elsewhere" is off the list and counts every connection it is offered. The redirect
 *   once got through: the browser's request filter never sees a redirect's second hop.
 * - The allowed origin also serves a look-alike sign-in form and records every header, cookie and form
 *   field it receives: a run once typed the administrator's key into it.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { describe, test, type TestContext } from 'node:test';
import { NEEDS_CHROMIUM, startConsoleFor } from '../../console/console-harness.ts';
import { WAIT_TIMEOUT_MS, startRegistries, testScope, type ListeningRegistry } from '../../helpers/listening.ts';
import { SCRIPTED_MODEL_KEY, startScriptedModel, type ModelTurn, type ScriptedModel } from '../../helpers/scripted-model.ts';
import { eventually } from '../../helpers/eventually.ts';

type Recorded = { method: string; url: string; headers: IncomingMessage['headers']; body: string };

/** A server that records every request and every connection it is offered, whatever it answers. */
async function recordingServer(t: TestContext, answer: (request: IncomingMessage, body: string, origins: { self: string }) => { status?: number; headers?: Record<string, string>; body?: string }) {
  const requests: Recorded[] = [];
  let connections = 0;
  const server: Server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    requests.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body });
    const reply = answer(request, body, { self: originOf(server) });
    response.writeHead(reply.status ?? 200, { 'content-type': 'text/html; charset=utf-8', ...reply.headers });
    response.end(reply.body ?? '');
  });
  server.on('connection', () => (connections += 1));
  server.on('upgrade', (_request, socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { origin: originOf(server), requests, connections: () => connections };
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

function originOf(server: Server): string {
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

const page = (title: string, inner: string) => ({ body: `<!doctype html><html lang="en"><title>${title}</title><body><h1>${title}</h1>${inner}</body></html>` });

/** The allowed origin's pages: each tries one way to "elsewhere". */
function escapes(elsewhere: string) {
  return (request: IncomingMessage): ReturnType<Parameters<typeof recordingServer>[1]> => {
    const path = (request.url ?? '/').split('?')[0];
    switch (path) {
      case '/redirect':
        return { status: 302, headers: { location: `${elsewhere}/landed` } };
      case '/meta-refresh':
        return page('Meta refresh', `<meta http-equiv="refresh" content="0;url=${elsewhere}/meta">`);
      case '/script-navigation':
        return page('Script navigation', `<script>window.location.href = '${elsewhere}/script'</script>`);
      case '/pop-up':
        return page('Pop-up', `<script>window.open('${elsewhere}/popup')</script>`);
      case '/download':
        return page('Download', `<a id="file" href="${elsewhere}/report.pdf" download>report</a><script>document.getElementById('file').click()</script>`);
      case '/websocket':
        return page('WebSocket', `<p id="out">waiting</p><script>const socket = new WebSocket('${elsewhere.replace('http', 'ws')}/socket'); socket.onopen = () => document.getElementById('out').textContent = 'open'; socket.onerror = () => document.getElementById('out').textContent = 'refused'</script>`);
      case '/service-worker':
        return page(
          'Service worker',
          `<p id="out">waiting</p><script>navigator.serviceWorker ? navigator.serviceWorker.register('/worker.js').then(() => document.getElementById('out').textContent = 'registered', () => document.getElementById('out').textContent = 'refused') : document.getElementById('out').textContent = 'refused'</script>`,
        );
      case '/worker.js':
        return { headers: { 'content-type': 'text/javascript' }, body: `fetch('${elsewhere}/from-worker')` };
      case '/sign-in':
        if (request.method === 'POST') return page('Signed in', '<p>Thank you.</p>');
        return page(
          'Sign in',
          `<form method="post" action="/sign-in"><label for="credential">API key</label><input id="credential" name="credential" type="password"><button type="submit">Sign in</button></form><img src="/pixel.png" alt=""><script>fetch('/steal', { credentials: 'include' }).finally(() => document.forms[0].submit())</script>`,
        );
      default:
        return page('Allowed', '<p>nothing here</p>');
    }
  };
}

type Stack = { registry: ListeningRegistry; consoleUrl: string; model: ScriptedModel };

async function startStack(t: TestContext, allowed: string, script: Parameters<typeof startScriptedModel>[1], consoleEnv: Record<string, string> = {}): Promise<Stack> {
  const scope = testScope(t);
  const model = await startScriptedModel(scope, script);
  const [registry] = await startRegistries(scope, 'sqlite', {
    env: { COMPUTER_USE_API_KEY: SCRIPTED_MODEL_KEY, COMPUTER_USE_MODEL_URL: model.url, COMPUTER_USE_ALLOWED_ORIGINS: allowed },
  });
  assert.ok(registry);
  const console = await startConsoleFor(scope, registry.baseUrl, consoleEnv);
  registry.app.ward.computerUse.setConsoleOrigin(console.url);
  return { registry, consoleUrl: console.url, model };
}

async function call(stack: Stack, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const response = await fetch(`${stack.registry.baseUrl}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(method === 'POST' ? { 'x-idempotency-key': crypto.randomUUID() } : {}), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const type = response.headers.get('content-type') ?? '';
  return { status: response.status, body: type.includes('json') ? await response.json() : await response.arrayBuffer() };
}

async function runToEnd(stack: Stack, request: Record<string, unknown>, headers: Record<string, string> = {}): Promise<any> {
  const started = await call(stack, 'POST', '/v1/admin/computer-use/runs', request, headers);
  assert.equal(started.status, 202, JSON.stringify(started.body));
  let status = 'queued';
  return eventually(
    async () => {
      const run = (await call(stack, 'GET', `/v1/admin/computer-use/runs/${started.body.session_id}`)).body;
      status = run.status;
      return ['completed', 'failed', 'canceled', 'max_turns_reached'].includes(run.status) ? run : undefined;
    },
    () => `the run to end (still ${status})`,
    WAIT_TIMEOUT_MS,
    100,
  );
}

/** The run's ledger leaves, as stored in the transparency log. */
async function ledgerLeaves(stack: Stack, run: any): Promise<any[]> {
  const first = run.ledger_entries[0].leaf_index;
  const entries = (await call(stack, 'GET', `/v1/transparency/entries?start=${first}&limit=100`)).body.entries as { leaf_index: number; leaf: string }[];
  const mine = new Set(run.ledger_entries.map((entry: any) => entry.leaf_index));
  return entries.filter((entry) => mine.has(entry.leaf_index)).map((entry) => JSON.parse(entry.leaf));
}

describe('computer use: the origin guard', NEEDS_CHROMIUM, () => {
  test('every way off the allowed origins is blocked in a run, reaches nothing, and is in the run\'s ledger as blocked', async (t) => {
    const elsewhere = await recordingServer(t, () => page('Elsewhere', '<p>secret</p>'));
    const allowed = await recordingServer(t, escapes(elsewhere.origin));
    const stack = await startStack(t, allowed.origin, []);
    const kinds: [string, string][] = [
      ['/redirect', 'redirect'],
      ['/meta-refresh', 'request'],
      ['/script-navigation', 'request'],
      ['/pop-up', 'request'],
      ['/download', 'request'],
      ['/websocket', 'tunnel'],
    ];
    for (const [path, kind] of kinds) {
      stack.model.requests.length = 0;
      const run = await runToEnd(stack, { task: `Open ${path}.`, url: `${allowed.origin}${path}`, max_turns: 2 });
      // The scripted model answers at once; one turn's wait gives the page's timers and pop-ups time.
      assert.equal(run.status, 'completed', `${path}: ${run.failure_reason}`);
      const leaves = await ledgerLeaves(stack, run);
      const blocked = leaves.filter((leaf) => leaf.type === 'computer_use.blocked');
      const where = [sha256(elsewhere.origin), sha256(new URL(elsewhere.origin).host)];
      assert.ok(
        blocked.some((leaf) => leaf.data.blocked_kind === kind && where.includes(leaf.data.origin_sha256)),
        `${path}: a ${kind} to elsewhere is recorded as blocked (${JSON.stringify(blocked.map((leaf) => leaf.data))})`,
      );
      for (const leaf of blocked) {
        assert.match(leaf.data.url_sha256, /^[0-9a-f]{64}$/);
        assert.equal(leaf.data.session_id, run.session_id);
      }
      assert.equal(elsewhere.connections(), 0, `${path}: nothing reached elsewhere`);
    }

    // A service worker is refused outright, so its script never runs (nor fetches anything).
    const worker = await runToEnd(stack, { task: 'Open the worker page.', url: `${allowed.origin}/service-worker`, max_turns: 2 });
    assert.equal(worker.status, 'completed', worker.failure_reason);
    assert.ok(!allowed.requests.some((request) => request.url === '/worker.js'), 'the worker script was never even fetched');
    assert.equal(elsewhere.connections(), 0);
    assert.equal(elsewhere.requests.length, 0);
    // The allowed origin was never sent the console's persona header.
    assert.ok(allowed.requests.length > 0);
    for (const request of allowed.requests) assert.equal(request.headers['x-ward-persona'], undefined, request.url);
  });

  test('a screenshot whose page redirects off the allowed origins is refused, not pictured', async (t) => {
    const elsewhere = await recordingServer(t, () => page('Elsewhere', '<p>secret</p>'));
    const allowed = await recordingServer(t, (request) => (request.url === '/dashboard' ? { status: 302, headers: { location: `${elsewhere.origin}/dashboard` } } : page('Allowed', '')));
    const stack = await startStack(t, allowed.origin, []);
    const answer = await call(stack, 'GET', `/v1/admin/computer-use/screenshot?page=dashboard&base_url=${encodeURIComponent(allowed.origin)}`);
    assert.equal(answer.status, 422);
    assert.equal(answer.body.error.code, 'URL_NOT_ALLOWED');
    assert.equal(answer.body.error.details.origin, elsewhere.origin);
    assert.equal(elsewhere.connections(), 0);
  });

  test("a run signs in to the console alone, with a credential of its own that is revoked when it ends; no other origin receives any", async (t) => {
    const allowed = await recordingServer(t, escapes('http://127.0.0.1:9'));
    // The look-alike form submits itself; the model looks, then reports.
    const stack = await startStack(t, allowed.origin, [{ actions: [{ action: 'wait', duration: 0.3 }] }, { final: 'Done.' }], { REGISTRY_AUTH_MODE: 'jwt' });
    const created = await call(stack, 'POST', '/v1/admin/billing/api-keys', { org_id: 'org-ops', display_name: 'admin', tier: 'enterprise', scopes: ['registry:read', 'registry:write', 'registry:admin'] });
    assert.equal(created.status, 201);
    const adminKey: string = created.body.raw_key;

    const run = await runToEnd(stack, { task: 'Sign in on the other site.', url: `${allowed.origin}/sign-in`, max_turns: 3 }, { 'x-api-key': adminKey });
    assert.equal(run.status, 'completed', run.failure_reason);
    assert.ok(allowed.requests.some((request) => request.method === 'POST' && request.url === '/sign-in'), 'the look-alike form was submitted');

    // The run's own key: made for it, narrowed to its persona (observer: no write), revoked at its end.
    const keys = (await call(stack, 'GET', '/v1/admin/billing/api-keys?org_id=org-ops', undefined, { 'x-api-key': adminKey })).body.api_keys as any[];
    const runKey = keys.find((key) => key.display_name.includes(run.session_id));
    assert.ok(runKey, 'a key was minted for the run');
    assert.deepEqual([...runKey.scopes].sort(), ['registry:admin', 'registry:read']);
    assert.equal(runKey.active, false);
    assert.ok(runKey.revoked_at, 'revoked when the run ended');
    assert.ok(runKey.expires_at, 'short-lived');
    assert.ok(runKey.last_used_at, 'the console was signed in to with it');
    const types = run.ledger_entries.map((entry: any) => entry.type);
    assert.ok(types.includes('api_key.created') && types.includes('api_key.revoked'), types.join(', '));

    // Nothing the other origin received carries a credential: no key, no authorization, no console cookie, no persona.
    const consoleCookies = ['ward_console', '_csrf'];
    for (const request of allowed.requests) {
      const seen = JSON.stringify(request);
      assert.ok(!seen.includes(adminKey), `${request.url}: the administrator's key`);
      assert.ok(!seen.includes(runKey.key_prefix), `${request.url}: the run's key`);
      assert.ok(!/rk_[0-9A-Za-z]{8}/.test(seen), `${request.url}: any API key`);
      assert.equal(request.headers.authorization, undefined, request.url);
      assert.equal(request.headers['x-ward-persona'], undefined, request.url);
      for (const name of consoleCookies) assert.ok(!(request.headers.cookie ?? '').includes(`${name}=`), `${request.url}: the console's ${name} cookie`);
    }
    // The model saw no credential either.
    for (const request of stack.model.requests) assert.ok(!JSON.stringify(request.body).includes('rk_'), 'no key in what the model was sent');
  });

  test("a run stops at its next turn when the key that asked for it is revoked, and its own key is revoked with it", async (t) => {
    const allowed = await recordingServer(t, () => page('Allowed', ''));
    let registryUrl = '';
    let adminKeyId = '';
    // The administrator's key is revoked while the model thinks about the first turn.
    const stack = await startStack(
      t,
      allowed.origin,
      async (index): Promise<ModelTurn> => {
        if (index === 0) {
          const revoked = await fetch(`${registryUrl}/v1/admin/billing/api-keys/${adminKeyId}`, { method: 'DELETE' });
          assert.equal(revoked.status, 204);
          return { actions: [{ action: 'wait', duration: 0.1 }] };
        }
        return { final: 'Should not be asked.' };
      },
      { REGISTRY_AUTH_MODE: 'jwt' },
    );
    registryUrl = stack.registry.baseUrl;
    const created = await call(stack, 'POST', '/v1/admin/billing/api-keys', { org_id: 'org-ops', display_name: 'admin', tier: 'enterprise', scopes: ['registry:read', 'registry:admin'] });
    adminKeyId = created.body.key_id;

    const run = await runToEnd(stack, { task: 'Look around.', max_turns: 5 }, { 'x-api-key': created.body.raw_key });
    assert.equal(run.status, 'failed');
    assert.equal(run.failure_reason, 'the credential that asked for the run was revoked or has expired');
    assert.equal(run.turns_taken, 1, 'the turn in flight is recorded; no other starts');
    assert.equal(stack.model.requests.length, 1, 'the model was not asked again');
    const keys = (await call(stack, 'GET', '/v1/admin/billing/api-keys?org_id=org-ops')).body.api_keys as any[];
    const runKey = keys.find((key) => key.display_name.includes(run.session_id));
    assert.ok(runKey?.revoked_at, "the run's own key is revoked too");
    const types = run.ledger_entries.map((entry: any) => entry.type);
    assert.ok(types.indexOf('api_key.revoked') < types.indexOf('computer_use.ended'), 'revoked before the end is written');
  });

  test('an address no browser can parse is 422 naming the field, on both endpoints', async (t) => {
    const stack = await startStack(t, 'http://127.0.0.1:9', []);
    const port = new URL(stack.consoleUrl).port;
    for (const url of [`http://127.0.0.1:${port}.evil.example/`, `http://127.0.0.1:${port}./`]) {
      const run = await call(stack, 'POST', '/v1/admin/computer-use/runs', { task: 'Open it.', url });
      assert.equal(run.status, 422, url);
      assert.equal(run.body.error.code, 'VALIDATION_ERROR');
      assert.deepEqual(run.body.error.details.errors.map((error: any) => [error.in, error.pointer]), [['body', '/url']]);
      const shot = await call(stack, 'GET', `/v1/admin/computer-use/screenshot?page=agents&base_url=${encodeURIComponent(url)}`);
      assert.equal(shot.status, 422, url);
      assert.equal(shot.body.error.code, 'VALIDATION_ERROR');
      assert.deepEqual(shot.body.error.details.errors.map((error: any) => [error.in, error.pointer]), [['query', '/base_url']]);
    }
  });
});
