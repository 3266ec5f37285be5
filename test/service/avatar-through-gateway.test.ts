/**
 * The clinician avatar's page reachable from `ward start` (issue 33 item 8): through the gateway at
 * `<gateway>/rpc/clinician_avatar/avatar`, the URL the gateway's `/health` gives as the agent's
 * `page_url` (what the console's mesh page links). The page, its files and what it calls (a
 * development token for a loopback caller, JSON-RPC, the voices) all answer through the gateway; a
 * relayed caller gets no token; health data in a body is refused as on JSON-RPC. Real processes.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS } from '../../src/computer-use/console-browser.ts';
import { loadConfig } from '../../src/core/config.ts';
import { loadMeshConfig } from '../../src/mesh/mesh-config.ts';
import { startService } from '../../src/service/start-service.ts';

async function startAvatarService(t: TestContext) {
  const dir = mkdtempSync(join(tmpdir(), 'ward-avatar-gw-'));
  const env = { REGISTRY_DATA_DIR: dir, REGISTRY_PORT: '0', GATEWAY_PORT: '0', CONSOLE_PORT: '0', REGISTRY_LOG_LEVEL: 'warn', MESH_LOG_LEVEL: 'warn', REGISTRY_HEALTH_PROBES: 'false' };
  const service = await startService(loadConfig(env), loadMeshConfig(env), env);
  t.after(async () => {
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return service;
}

const CHROMIUM = '/usr/bin/chromium';
const NEEDS_CHROMIUM = existsSync(CHROMIUM) ? {} : { skip: `${CHROMIUM} is absent (apt-get install chromium)` };

describe('the avatar page through the gateway', () => {
  test('page_url in /health; the page, its files, a token, JSON-RPC and the voices answer there', async (t) => {
    const service = await startAvatarService(t);
    const gateway = service.gateway.url;
    const health = (await (await fetch(`${gateway}/health`)).json()) as { agents: { alias: string; page_url?: string | null }[] };
    const pageUrl = health.agents.find((agent) => agent.alias === 'clinician_avatar')?.page_url;
    assert.equal(pageUrl, `${gateway}/rpc/clinician_avatar/avatar`);
    assert.equal(health.agents.find((agent) => agent.alias === 'consent')?.page_url, null, 'an agent without a page has none');

    const page = await fetch(pageUrl as string);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'none'/);
    assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
    const html = await page.text();
    assert.match(html, /src="avatar\/avatar\.js"/, 'the page names its files relative to itself');
    const script = await fetch(new URL('avatar/avatar.js', pageUrl as string));
    assert.equal(script.status, 200);
    assert.match(script.headers.get('content-type') ?? '', /javascript/);

    const base = `${gateway}/rpc/clinician_avatar/`;
    const tokenAnswer = await fetch(new URL('dev/token', base));
    assert.equal(tokenAnswer.status, 200);
    const { token, sub } = (await tokenAnswer.json()) as { token: string; sub: string };
    const relayed = await fetch(new URL('dev/token', base), { headers: { 'x-forwarded-for': '203.0.113.9' } });
    assert.equal(relayed.status, 403, 'a caller a proxy relayed gets no development token');

    const auth = { authorization: `Bearer ${token}`, 'x-agent-id': sub, 'content-type': 'application/json' };
    const started = await fetch(base, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'avatar/start_session',
        params: { patient_case: { chief_complaint: 'sore throat', age: 30, gender: 'female', urgency: 'low' }, persona: { name: 'Dr Ward', role: 'GP' } },
      }),
    });
    const rpc = (await started.json()) as { result?: { session_id: string; greeting: string }; error?: unknown };
    assert.ok(rpc.result?.session_id, JSON.stringify(rpc));
    const voices = await fetch(new URL('tts/voices', base), { headers: auth });
    assert.ok([200, 503].includes(voices.status), `voices: ${voices.status}`);
    const anonymousVoices = await fetch(new URL('tts/voices', base));
    assert.equal(anonymousVoices.status, 401, 'the agent authenticates its own routes');
  });

  test('refusals: an unknown alias, an unknown path, health data in a body, the query or the path, a body not JSON', async (t) => {
    const service = await startAvatarService(t);
    const gateway = service.gateway.url;
    const unknownAlias = await fetch(`${gateway}/rpc/nobody/avatar`);
    assert.equal(unknownAlias.status, 404);
    const envelope = (await unknownAlias.json()) as { jsonrpc: string; error: { code: number } };
    assert.equal(envelope.jsonrpc, '2.0');
    assert.equal(envelope.error.code, -32010);
    const unknownPath = await fetch(`${gateway}/rpc/clinician_avatar/no-such-page`);
    assert.equal(unknownPath.status, 404);
    const phi = await fetch(`${gateway}/rpc/clinician_avatar/tts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'NHS number 943 476 5919' }),
    });
    assert.equal(phi.status, 422);
    assert.equal(((await phi.json()) as { error: { code: number } }).error.code, -32012);
    // The query and the path are scanned as the body is (regression: they went to the agent unscanned).
    for (const url of [`${gateway}/rpc/clinician_avatar/tts/voices?patient=943%20476%205919`, `${gateway}/rpc/clinician_avatar/avatar/9434765919`]) {
      const refused = await fetch(url);
      assert.equal(refused.status, 422, url);
      assert.equal(((await refused.json()) as { error: { code: number } }).error.code, -32012);
    }
    // A body the guard cannot read (not JSON) is refused, not passed on unscanned (docs/mesh.md).
    const plain = await fetch(`${gateway}/rpc/clinician_avatar/tts`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'NHS number 943 476 5919' });
    assert.equal(plain.status, 415);
    assert.equal(((await plain.json()) as { error: { code: number } }).error.code, -32600);
  });

  test('in Chromium: the page at page_url holds a consultation through the gateway', NEEDS_CHROMIUM, async (t) => {
    const service = await startAvatarService(t);
    const pageUrl = `${service.gateway.url}/rpc/clinician_avatar/avatar`;
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS], headless: true });
    t.after(() => browser.close());
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    assert.equal((await page.goto(pageUrl))?.status(), 200);
    await page.waitForSelector('body[data-ready="true"]');
    await page.uncheck('#speak');
    await page.fill('#complaint', 'sore throat since yesterday');
    await page.fill('#age', '30');
    await page.selectOption('#gender', 'female');
    await page.selectOption('#urgency', 'low');
    await page.click('#start');
    const clinician = page.locator('.msg.clinician');
    await clinician.first().waitFor();
    assert.match((await clinician.first().textContent()) ?? '', /^Hello, I'm Dr Ada/);
    assert.deepEqual(errors, []);
  });
});
