import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createConsentAgent } from '../../../src/mesh/agents/consent/consent-agent.ts';
import { createTriageAgent } from '../../../src/mesh/agents/triage/triage-agent.ts';
import { createMeshClient } from '../../../src/mesh/runtime/mesh-client.ts';
import { createRemoteConsentChecker } from '../../../src/mesh/runtime/remote-consent.ts';
import { systemClock } from '../../../src/core/clock.ts';
import { CALLER, SECRET, dataMessage, eventually, listenAgent, meshConfig, rpc, tempDir, textMessage } from '../helpers.ts';

const VITALS = { respiratory_rate: 22, oxygen_saturation: 94, systolic_bp: 105, heart_rate: 118, consciousness: 'alert', temperature_c: 37.2 };

async function settledTask(url: string, taskId: string): Promise<any> {
  return eventually(async () => {
    const task = (await rpc(url, 'tasks/get', { task_id: taskId })).result;
    return ['completed', 'failed', 'canceled', 'input-required'].includes(task.status.state) ? task : undefined;
  }, 'the turn to end');
}

/** A consent agent listening for real, and a checker that calls it over the mesh as the triage agent. */
async function consentOverTheMesh(t: Parameters<typeof listenAgent>[0]) {
  const consent = await listenAgent(t, createConsentAgent({ dataDir: tempDir(t), clock: systemClock }));
  const client = createMeshClient({ url: consent.url, secret: SECRET, sub: 'did:web:localhost:agents:triage' });
  return { url: consent.url, checker: createRemoteConsentChecker(client) };
}

describe('triage agent', () => {
  test('triage/assess answers the urgency assessment', async (t) => {
    const { url } = await listenAgent(t, createTriageAgent({ consent: { isGranted: async () => false } }));
    const answer = await rpc(url, 'triage/assess', { chief_complaint: 'chest pain', vital_signs: VITALS });
    assert.equal(answer.result.urgency, 'high');
    assert.equal(answer.result.news2.total, 6);
  });

  test('a task asks for vital signs (input-required), then completes with the assessment artifact', async (t) => {
    const { url } = await listenAgent(t, createTriageAgent({ consent: { isGranted: async () => false } }));
    const sent = await rpc(url, 'tasks/send', { message: textMessage('chest pain') });
    const asking = await settledTask(url, sent.result.task_id);
    assert.equal(asking.status.state, 'input-required');
    assert.match(asking.status.message.parts[0].text, /vital signs/);
    await rpc(url, 'tasks/send', { task_id: sent.result.task_id, message: dataMessage({ vital_signs: VITALS }) });
    const done = await settledTask(url, sent.result.task_id);
    assert.equal(done.status.state, 'completed');
    assert.match(done.status.message.parts[0].text, /^Urgency: high/);
    assert.equal(done.artifacts[0].parts[0].data.urgency, 'high');
  });

  test('an assessment about a known patient needs consent, checked over the mesh with the consent agent (-32003 until granted)', async (t) => {
    const consent = await consentOverTheMesh(t);
    const { url } = await listenAgent(t, createTriageAgent({ consent: consent.checker }), { consent: consent.checker });
    const params = { chief_complaint: 'chest pain', vital_signs: VITALS, patient_ref: 'Patient/p-42' };
    const denied = await rpc(url, 'triage/assess', params);
    assert.equal(denied.error.code, -32003);
    const grant = await rpc(consent.url, 'consent/grant', { requester: CALLER, patient_ref: 'Patient/p-42', purpose: 'treatment' });
    assert.equal(grant.result.consent.status, 'active');
    assert.equal((await rpc(url, 'triage/assess', params)).result.urgency, 'high');
    assert.equal((await rpc(url, 'triage/assess', params, 'did:web:localhost:agents:someone-else')).error.code, -32003, 'consent is per requester');
  });

  test('a triage task about a patient without consent fails with the -32003 error in its status', async (t) => {
    const consent = await consentOverTheMesh(t);
    const { url } = await listenAgent(t, createTriageAgent({ consent: consent.checker }), { consent: consent.checker });
    const sent = await rpc(url, 'tasks/send', { message: dataMessage({ chief_complaint: 'chest pain', vital_signs: VITALS, patient_ref: 'Patient/p-9' }) });
    const done = await settledTask(url, sent.result.task_id);
    assert.equal(done.status.state, 'failed');
    assert.equal(done.status.message.parts[0].data.error.code, -32003);
  });

  test('an unreachable consent service fails closed with -32011, not a denial', async (t) => {
    const client = createMeshClient({ url: 'http://127.0.0.1:9/', secret: SECRET, sub: 'did:web:localhost:agents:triage', timeoutMs: 2000 });
    const checker = createRemoteConsentChecker(client);
    const { url } = await listenAgent(t, createTriageAgent({ consent: checker }), { consent: checker, config: meshConfig(t) });
    const answer = await rpc(url, 'triage/assess', { chief_complaint: 'cough', patient_ref: 'Patient/p-1' });
    assert.equal(answer.error.code, -32011);
  });
});
