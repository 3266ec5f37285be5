import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import { systemClock, type Clock } from '../../../../src/core/clock.ts';
import { createAvatarAgent } from '../../../../src/mesh/agents/avatar/avatar-agent.ts';
import { createConsentAgent } from '../../../../src/mesh/agents/consent/consent-agent.ts';
import { createMeshClient } from '../../../../src/mesh/runtime/mesh-client.ts';
import { createRemoteConsentChecker } from '../../../../src/mesh/runtime/remote-consent.ts';
import type { ConsentChecker } from '../../../../src/mesh/runtime/consent-requirement.ts';
import { CALLER, SECRET, listenAgent, meshConfig, rpc, tempDir } from '../../helpers.ts';

const CASE = { chief_complaint: 'cough for two weeks', age: 54, gender: 'female', urgency: 'low' };
const PERSONA = { name: 'Dr Ada', role: 'your virtual GP' };

/** A clock the test moves by hand; only the avatar's sessions read it (tokens use the real time). */
function manualClock(): Clock & { advance(ms: number): void } {
  let now = Date.now();
  return { now: () => new Date(now), advance: (ms) => (now += ms) };
}

async function avatar(t: TestContext, options: { clock?: Clock; consent?: ConsentChecker; sessionIdleMs?: number } = {}) {
  const config = meshConfig(t);
  const agent = createAvatarAgent({ config, clock: options.clock ?? systemClock, ...(options.sessionIdleMs ? { sessionIdleMs: options.sessionIdleMs } : {}) });
  return listenAgent(t, agent, { config, ...(options.consent ? { consent: options.consent } : {}) });
}

describe('clinician avatar agent', () => {
  test('start_session picks the framework and answers the greeting, the first phase and the progress', async (t) => {
    const { url } = await avatar(t);
    const started = (await rpc(url, 'avatar/start_session', { patient_case: CASE, persona: PERSONA })).result;
    assert.equal(started.framework, 'Calgary-Cambridge');
    assert.equal(started.consultation_phase, 'initiating_session');
    assert.match(started.greeting, /^Hello, I'm Dr Ada/);
    assert.equal(started.framework_progress.total, 4);
    assert.equal(started.framework_progress.steps[0].status, 'current');
    assert.match(started.session_id, /^[0-9a-f-]{36}$/);
  });

  test('bad patient cases are refused with -32602 naming the field', async (t) => {
    const { url } = await avatar(t);
    const bad: readonly [string, unknown][] = [
      ['/patient_case/age', { ...CASE, age: 131 }],
      ['/patient_case/age', { ...CASE, age: 4.5 }],
      ['/patient_case/gender', { ...CASE, gender: 'f' }],
      ['/patient_case/urgency', { ...CASE, urgency: 'urgent' }],
      ['/patient_case/chief_complaint', { ...CASE, chief_complaint: '' }],
    ];
    for (const [pointer, patientCase] of bad) {
      const answer = await rpc(url, 'avatar/start_session', { patient_case: patientCase, persona: PERSONA });
      assert.equal(answer.error.code, -32602, pointer);
      assert.ok(answer.error.data.errors.some((error: { pointer: string }) => error.pointer.startsWith(pointer)), JSON.stringify(answer.error));
    }
    const urgency = await rpc(url, 'avatar/start_session', { patient_case: { ...CASE, urgency: 'urgent' }, persona: PERSONA });
    assert.deepEqual(urgency.error.data.errors, [{ pointer: '/patient_case/urgency', reason: 'must be equal to one of the allowed values: low, medium, high, critical, emergency' }]);
    assert.equal((await rpc(url, 'avatar/start_session', { patient_case: CASE })).error.code, -32602, 'persona is required');
    assert.equal((await rpc(url, 'avatar/patient_message', { session_id: 'x' })).error.code, -32602, 'message is required');
  });

  test('a consultation runs to its summary over JSON-RPC: findings present and absent, no red flags, a duration', async (t) => {
    const clock = manualClock();
    const { url } = await avatar(t, { clock });
    const { session_id } = (await rpc(url, 'avatar/start_session', { patient_case: { ...CASE, chief_complaint: 'headache' }, persona: PERSONA })).result;
    const replies = ['My forehead, since yesterday, throbbing', 'It does not spread, and no nausea', 'Constant', 'Worse with light', '7/10'];
    const phases = [];
    for (const message of replies) {
      clock.advance(60_000);
      const turn = (await rpc(url, 'avatar/patient_message', { session_id, message })).result;
      phases.push(turn.consultation_phase);
      assert.ok(turn.clinician_response.length > 0);
    }
    assert.deepEqual(phases, ['radiation', 'time_course', 'exacerbating_relieving', 'severity', 'closing']);
    assert.equal((await rpc(url, 'avatar/get_status', { session_id })).result.consultation_phase, 'closing');
    const summary = (await rpc(url, 'avatar/end_session', { session_id })).result;
    assert.equal(summary.consultation_phase, 'completed');
    assert.equal(summary.duration_s, 300);
    assert.deepEqual(summary.red_flags, []);
    const associations = summary.findings.find((entry: { step: string }) => entry.step === 'associations');
    assert.deepEqual(associations.findings, [{ finding: 'nausea', present: false }]);
    assert.equal((await rpc(url, 'avatar/get_status', { session_id })).error.code, -32013, 'an ended session is gone');
  });

  test('a red flag escalates the session, and further messages are refused', async (t) => {
    const { url } = await avatar(t);
    const { session_id } = (await rpc(url, 'avatar/start_session', { patient_case: CASE, persona: PERSONA })).result;
    const turn = (await rpc(url, 'avatar/patient_message', { session_id, message: 'I have crushing chest pain and feel awful' })).result;
    assert.equal(turn.consultation_phase, 'escalated');
    assert.deepEqual(turn.red_flags, ['cardiac_chest_pain']);
    assert.match(turn.clinician_response, /999/);
    assert.equal((await rpc(url, 'avatar/patient_message', { session_id, message: 'hello?' })).error.code, -32602);
    assert.deepEqual((await rpc(url, 'avatar/end_session', { session_id })).result.red_flags, ['cardiac_chest_pain']);
  });

  test('a session expires after the configured inactivity and then answers -32013', async (t) => {
    const clock = manualClock();
    const { url } = await avatar(t, { clock, sessionIdleMs: 60_000 });
    const { session_id } = (await rpc(url, 'avatar/start_session', { patient_case: CASE, persona: PERSONA })).result;
    clock.advance(60_000);
    assert.equal((await rpc(url, 'avatar/get_status', { session_id })).result.consultation_phase, 'initiating_session', 'exactly the idle time is still alive');
    clock.advance(60_001);
    const expired = await rpc(url, 'avatar/patient_message', { session_id, message: "I've got a cough" });
    assert.equal(expired.error.code, -32013);
    assert.equal(expired.error.data.session_id, session_id);
    assert.equal((await rpc(url, 'avatar/get_status', { session_id: 'no-such-session' })).error.code, -32013);
  });

  test('a session belongs to the caller that started it', async (t) => {
    const { url } = await avatar(t);
    const { session_id } = (await rpc(url, 'avatar/start_session', { patient_case: CASE, persona: PERSONA })).result;
    assert.equal((await rpc(url, 'avatar/get_status', { session_id }, 'did:web:localhost:agents:someone-else')).error.code, -32013);
  });

  test('a session about a known patient needs consent, checked with a real consent agent (-32003 until granted)', async (t) => {
    const consentAgent = await listenAgent(t, createConsentAgent({ dataDir: tempDir(t), clock: systemClock }));
    const client = createMeshClient({ url: consentAgent.url, secret: SECRET, sub: 'did:web:localhost:agents:clinician_avatar' });
    const checker = createRemoteConsentChecker(client);
    const { url } = await avatar(t, { consent: checker });
    const params = { patient_case: CASE, persona: PERSONA, patient_ref: 'Patient/p-7' };
    const denied = await rpc(url, 'avatar/start_session', params);
    assert.equal(denied.error.code, -32003);
    await rpc(consentAgent.url, 'consent/grant', { requester: CALLER, patient_ref: 'Patient/p-7', purpose: 'treatment' });
    assert.equal((await rpc(url, 'avatar/start_session', params)).result.framework, 'Calgary-Cambridge');
    assert.ok((await rpc(url, 'avatar/start_session', { patient_case: CASE, persona: PERSONA })).result.session_id, 'no patient_ref, no consent check');
  });
});
