/** The console's probes and metrics: readiness follows the registry it depends on; /metrics needs no sign-in on this machine. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startConsoleStack } from './console-harness.ts';

describe('console probes and metrics', () => {
  test('livez, readyz (503 once the registry is gone), and metrics without sign-in', async (t) => {
    const stack = await startConsoleStack(t, 'sqlite', { consoleEnv: { REGISTRY_AUTH_MODE: 'jwt', CONSOLE_TRUST_PROXY: '127.0.0.1' } });
    assert.deepEqual(await (await fetch(stack.url('/livez'))).json(), { status: 'ok' });
    assert.deepEqual(await (await fetch(stack.url('/readyz'))).json(), { status: 'ready' });
    await fetch(stack.url('/sign-in'));
    const metrics = await fetch(stack.url('/metrics'));
    assert.equal(metrics.status, 200);
    assert.match(await metrics.text(), /ward_http_requests_total\{method="GET",route="\/sign-in",status="200",server="console"\} 1/);

    // Behind a trusted proxy, a scraper elsewhere (the client the proxy names) is not answered.
    assert.equal((await fetch(stack.url('/metrics'), { headers: { 'x-forwarded-for': '203.0.113.9' } })).status, 404);
    assert.equal((await fetch(stack.url('/metrics'), { headers: { 'x-forwarded-for': '127.0.0.1' } })).status, 200);

    stack.registry.app.server.closeAllConnections();
    await stack.registry.app.close();
    const unready = await fetch(stack.url('/readyz'));
    assert.equal(unready.status, 503);
    assert.match(((await unready.json()) as { reason: string }).reason, /does not answer/);
    assert.equal((await fetch(stack.url('/livez'))).status, 200);
  });
});
