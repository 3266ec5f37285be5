import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { systemClock } from '../../../src/core/clock.ts';
import { createConsentAgent } from '../../../src/mesh/agents/consent/consent-agent.ts';
import { CALLER, dataMessage, eventually, listenAgent, meshConfig, rpc, tempDir } from '../helpers.ts';

const KEY = { requester: 'did:web:localhost:agents:clinician_avatar', patient_ref: 'Patient/abc-1', purpose: 'treatment' };

describe('consent agent', () => {
  test('grant, check and revoke consent for a requester, patient reference and purpose', async (t) => {
    const { url } = await listenAgent(t, createConsentAgent({ dataDir: tempDir(t), clock: systemClock }));
    assert.equal((await rpc(url, 'consent/check', KEY)).result.granted, false);
    const granted = (await rpc(url, 'consent/grant', KEY)).result.consent;
    assert.equal(granted.status, 'active');
    assert.equal(granted.granted_by, CALLER);
    assert.equal((await rpc(url, 'consent/check', KEY)).result.granted, true);
    assert.equal((await rpc(url, 'consent/check', { ...KEY, purpose: 'research' })).result.granted, false, 'consent is per purpose');
    assert.equal((await rpc(url, 'consent/check', { ...KEY, patient_ref: 'Patient/other' })).result.granted, false, 'and per patient');
    assert.equal((await rpc(url, 'consent/revoke', KEY)).result.revoked, true);
    assert.equal((await rpc(url, 'consent/check', KEY)).result.granted, false);
    assert.equal((await rpc(url, 'consent/revoke', KEY)).result.revoked, false, 'nothing left to revoke');
  });

  test('a consent with an expiry is in force until then; one in the past is refused', async (t) => {
    const { url } = await listenAgent(t, createConsentAgent({ dataDir: tempDir(t), clock: systemClock }));
    const future = new Date(Date.now() + 3_600_000).toISOString();
    assert.equal((await rpc(url, 'consent/grant', { ...KEY, expires_at: future })).result.consent.expires_at, future);
    assert.equal((await rpc(url, 'consent/check', KEY)).result.granted, true);
    assert.equal((await rpc(url, 'consent/grant', { ...KEY, expires_at: '2001-01-01T00:00:00Z' })).error.code, -32602);
  });

  test('bad parameters are -32602: unknown purpose, a patient reference with spaces', async (t) => {
    const { url } = await listenAgent(t, createConsentAgent({ dataDir: tempDir(t), clock: systemClock }));
    assert.equal((await rpc(url, 'consent/grant', { ...KEY, purpose: 'marketing' })).error.code, -32602);
    assert.equal((await rpc(url, 'consent/check', { ...KEY, patient_ref: 'Jane Doe' })).error.code, -32602);
  });

  test('consents are durable: a new agent on the same data directory still has them', async (t) => {
    const dataDir = tempDir(t);
    const config = meshConfig(t);
    const first = await listenAgent(t, createConsentAgent({ dataDir, clock: systemClock }), { config });
    await rpc(first.url, 'consent/grant', KEY);
    await first.app.close();
    const second = await listenAgent(t, createConsentAgent({ dataDir, clock: systemClock }), { config });
    assert.equal((await rpc(second.url, 'consent/check', KEY)).result.granted, true);
  });

  test('a consent task runs one action from a data part', async (t) => {
    const { url } = await listenAgent(t, createConsentAgent({ dataDir: tempDir(t), clock: systemClock }));
    const sent = await rpc(url, 'tasks/send', { message: dataMessage({ action: 'grant', ...KEY }) });
    const done = await eventually(async () => {
      const task = (await rpc(url, 'tasks/get', { task_id: sent.result.task_id })).result;
      return task.status.state === 'completed' ? task : undefined;
    }, 'completion');
    assert.equal(done.artifacts[0].parts[0].data.consent.status, 'active');
    assert.equal((await rpc(url, 'consent/check', KEY)).result.granted, true);
  });
});
