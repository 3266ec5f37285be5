/**
 * The image's HEALTHCHECK (deploy/container/healthcheck.ts): which address it asks for each command,
 * from the settings the command reads; healthy (0) when /livez answers 200, unhealthy (1) when it
 * answers anything else or nothing. Run here against a real registry and a real refusing port; inside
 * the image, `npm run image:test` runs it through `podman healthcheck run`.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { probeTarget } from '../../deploy/container/healthcheck.ts';
import { startRegistries, testScope } from '../helpers/listening.ts';
import { refusedPort } from '../helpers/refused-port.ts';
import { REPO_ROOT, runScript } from '../helpers/ward-process.ts';

const HEALTHCHECK = join(REPO_ROOT, 'deploy', 'container', 'healthcheck.ts');

describe('the container health check', () => {
  test("each serving command is asked on its own port, a wildcard host on loopback, TLS when it serves TLS", () => {
    assert.deepEqual(probeTarget('registry', {}), { url: 'http://127.0.0.1:8080/livez', tls: false });
    assert.deepEqual(probeTarget('registry', { REGISTRY_HOST: '0.0.0.0', REGISTRY_PORT: '9000' }), { url: 'http://127.0.0.1:9000/livez', tls: false });
    assert.deepEqual(probeTarget('registry', { REGISTRY_HOST: '::', REGISTRY_TLS_CERT_FILE: '/c.pem', REGISTRY_TLS_KEY_FILE: '/k.pem' }), { url: 'https://[::1]:8080/livez', tls: true });
    assert.deepEqual(probeTarget('start', { REGISTRY_PORT: '8181' }), { url: 'http://127.0.0.1:8181/livez', tls: false });
    assert.deepEqual(probeTarget('gateway', { MESH_HOST: '0.0.0.0', GATEWAY_PORT: '8100' }), { url: 'http://127.0.0.1:8100/livez', tls: false });
    assert.deepEqual(probeTarget('console', { CONSOLE_HOST: '10.1.2.3', CONSOLE_PORT: '3000' }), { url: 'http://10.1.2.3:3000/livez', tls: false });
    assert.ok('none' in probeTarget('migrate', {}), 'ward migrate serves nothing');
    assert.ok('none' in probeTarget('registry', { REGISTRY_PORT: '0' }), 'a free port cannot be known');
    assert.throws(() => probeTarget('registry', { REGISTRY_PORT: 'eighty' }), /REGISTRY_PORT/);
  });

  test('healthy when /livez answers 200, unhealthy when it answers otherwise or not at all', async (t) => {
    const [registry] = await startRegistries(testScope(t), 'sqlite');
    const port = new URL(registry!.baseUrl).port;
    const healthy = await runScript(t, HEALTHCHECK, ['registry'], { REGISTRY_HOST: '127.0.0.1', REGISTRY_PORT: port });
    assert.equal(healthy.code, 0, healthy.stderr);
    assert.match(healthy.stdout, new RegExp(`healthy: http://127\\.0\\.0\\.1:${port}/livez answered 200`));

    const failing = createServer((_request, response) => response.writeHead(503).end());
    await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
    t.after(() => failing.close());
    const answered = await runScript(t, HEALTHCHECK, ['console'], { CONSOLE_PORT: String((failing.address() as AddressInfo).port) });
    assert.equal(answered.code, 1);
    assert.match(answered.stdout, /unhealthy: .* answered 503/);

    const refused = await runScript(t, HEALTHCHECK, ['gateway'], { GATEWAY_PORT: String(await refusedPort()) });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /unhealthy: http:\/\/127\.0\.0\.1:\d+\/livez: .*ECONNREFUSED/);
  });
});
