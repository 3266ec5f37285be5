/**
 * The drain before a shutdown (REGISTRY_SHUTDOWN_DRAIN_MS, docs/operations.md "Rolling restarts and
 * upgrades"), on `ward registry` as a real process: after SIGTERM /readyz answers 503 naming the
 * drain while every other request, a write included, is still served on new connections; then the
 * process closes and exits 0. Without the setting it closes at once, as before.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { freePort } from '../../src/core/http/free-port.ts';
import { startRegistryProcess, stopRegistryProcess } from '../../src/service/federation-up.ts';
import { eventually } from '../helpers/eventually.ts';
import { agentBody } from '../helpers/registry.ts';

async function start(t: TestContext, drainMs: string) {
  const dataDir = mkdtempSync(join(tmpdir(), 'ward-drain-'));
  const registry = await startRegistryProcess({ tier: 'organisational', name: 'drain', jurisdiction: 'GB' }, { port: await freePort(), dataDir, env: { REGISTRY_SHUTDOWN_DRAIN_MS: drainMs } });
  t.after(async () => {
    await stopRegistryProcess(registry.process, 'SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });
  return registry;
}

describe('the drain before a shutdown', () => {
  test('after SIGTERM /readyz is 503 while everything else is still served; then the process exits 0', async (t) => {
    // Long enough that the checks below run inside it even on a loaded machine.
    const registry = await start(t, '8000');
    assert.equal((await fetch(`${registry.url}/readyz`)).status, 200);
    const exit = new Promise<number | null>((resolve) => registry.process.once('exit', resolve));
    registry.process.kill('SIGTERM');
    const readiness = await eventually(async () => {
      const response = await fetch(`${registry.url}/readyz`, { headers: { connection: 'close' } });
      return response.status === 503 ? ((await response.json()) as any) : undefined;
    }, '/readyz to turn 503');
    assert.equal(readiness.error.details.checks.draining.detail, 'shutting down');
    // Still serving, on a new connection: a read and a write.
    assert.equal((await fetch(`${registry.url}/v1/agents?limit=1`, { headers: { connection: 'close' } })).status, 200);
    const written = await fetch(`${registry.url}/v1/agents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-idempotency-key': randomUUID(), connection: 'close' },
      body: JSON.stringify(agentBody()),
    });
    assert.equal(written.status, 201);
    assert.equal(registry.process.exitCode, null, 'still draining');
    // Then it closes by itself and exits 0.
    assert.equal(await exit, 0);
  });

  test('without a drain SIGTERM closes at once', async (t) => {
    const registry = await start(t, '0');
    const exit = new Promise<number | null>((resolve) => registry.process.once('exit', resolve));
    registry.process.kill('SIGTERM');
    assert.equal(await exit, 0);
    await assert.rejects(fetch(`${registry.url}/readyz`));
  });
});
