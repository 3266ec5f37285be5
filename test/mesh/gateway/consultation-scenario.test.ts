/**
 * The whole consultation journey through the gateway (issue 8, item 6), with the shipped agents as
 * real child processes: triage/assess → avatar/start_session with the urgency triage gave → patient
 * messages → avatar/end_session, once per framework. Every request also passes the gateway's PHI
 * guard, which must let ordinary consultation talk through and stop identifiers.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { RunningGateway } from '../../../src/mesh/gateway/gateway-server.ts';
import { CALLER, rpc } from '../helpers.ts';
import { startTestGateway } from './gateway-helpers.ts';

const agentEntry = (folder: string) => fileURLToPath(new URL(`../../../src/mesh/agents/${folder}/index.ts`, import.meta.url));

const PERSONA = { name: 'Dr Ada', role: 'your virtual GP' };
const NORMAL_VITALS = { respiratory_rate: 16, oxygen_saturation: 98, systolic_bp: 125, heart_rate: 72, consciousness: 'alert', temperature_c: 36.8 };

type Turn = { readonly message: string; readonly phase: string };

let gateway: RunningGateway;

/** One JSON-RPC call to an agent through the gateway; fails the test on any error. */
async function call(alias: string, method: string, params: unknown): Promise<any> {
  const answer = await rpc(`${gateway.url}/rpc/${alias}`, method, params);
  assert.equal(answer.error, undefined, `${alias} ${method}: ${JSON.stringify(answer.error)}`);
  return answer.result;
}

/** Sends each patient message and checks the phase after it; the progress count never goes back. */
async function converse(sessionId: string, turns: readonly Turn[]): Promise<void> {
  let completed = 0;
  for (const { message, phase } of turns) {
    const turn = await call('clinician_avatar', 'avatar/patient_message', { session_id: sessionId, message });
    assert.equal(turn.consultation_phase, phase, `after "${message}": ${turn.clinician_response}`);
    assert.ok(turn.clinician_response.length > 0);
    assert.ok(turn.framework_progress.completed >= completed, 'progress never goes back');
    completed = turn.framework_progress.completed;
    assert.deepEqual(turn.red_flags, []);
  }
}

/** The summary's findings as `step: finding (+|-)` lines, for compact assertions. */
function findingLines(summary: any): string[] {
  return summary.findings.flatMap((step: any) => step.findings.map((finding: any) => `${step.step}: ${finding.finding} ${finding.present ? '+' : '-'}`));
}

describe('consultation scenario through the gateway', () => {
  // One gateway for the whole journey; its cleanups run when the suite ends (LIFO, as t.after would).
  const cleanups: (() => unknown)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });
  before(async () => {
    gateway = await startTestGateway(
      { after: (fn: () => unknown) => cleanups.push(fn) },
      {
        consent: { entry: agentEntry('consent') },
        triage: { entry: agentEntry('triage'), dependencies: ['consent'] },
        clinician_avatar: { entry: agentEntry('avatar'), dependencies: ['consent'] },
      },
    );
  });

  test('emergency: triage says emergency, the avatar runs ABCDE to the end', async () => {
    const triage = await call('triage', 'triage/assess', {
      chief_complaint: 'short of breath and feeling very unwell',
      vital_signs: { respiratory_rate: 26, oxygen_saturation: 90, systolic_bp: 95, heart_rate: 125, consciousness: 'alert', temperature_c: 38.5 },
    });
    assert.equal(triage.urgency, 'emergency');
    const started = await call('clinician_avatar', 'avatar/start_session', {
      patient_case: { chief_complaint: 'short of breath', age: 67, gender: 'male', urgency: triage.urgency },
      persona: PERSONA,
    });
    assert.equal(started.framework, 'ABCDE');
    assert.equal(started.consultation_phase, 'airway');
    assert.match(started.greeting, /Can you talk and swallow normally\?/);
    await converse(started.session_id, [
      { message: 'I can talk, but only in short sentences', phase: 'breathing' },
      { message: 'My breathing is fast and I keep coughing', phase: 'circulation' },
      { message: 'My heart is racing and my hands are clammy', phase: 'disability' },
      { message: "I'm awake and I know where I am", phase: 'exposure' },
      { message: 'I have a fever of 38.5 but no rash', phase: 'closing' },
      { message: "No, that's everything", phase: 'completed' },
    ]);
    const summary = await call('clinician_avatar', 'avatar/end_session', { session_id: started.session_id });
    assert.equal(summary.consultation_phase, 'completed');
    assert.equal(summary.framework_progress.completed, 5);
    assert.deepEqual(summary.red_flags, []);
    assert.deepEqual(findingLines(summary), [
      'airway: talk +',
      'breathing: breathing +',
      'breathing: cough +',
      'circulation: heart +',
      'circulation: racing +',
      'circulation: clammy +',
      'disability: awake +',
      'disability: where i am +',
      'exposure: fever +',
      'exposure: rash -',
    ]);
  });

  test('pain: triage says low, a headache runs SOCRATES through all eight steps', async () => {
    const triage = await call('triage', 'triage/assess', { chief_complaint: 'headache', vital_signs: NORMAL_VITALS });
    assert.equal(triage.urgency, 'low');
    const started = await call('clinician_avatar', 'avatar/start_session', {
      patient_case: { chief_complaint: 'headache', age: 34, gender: 'female', urgency: triage.urgency },
      persona: PERSONA,
    });
    assert.equal(started.framework, 'SOCRATES');
    // "headache" already says where: the consultation opens at onset, and says it understood.
    assert.equal(started.consultation_phase, 'onset');
    assert.match(started.greeting, /I understand that the pain is in your head\./);
    await converse(started.session_id, [
      { message: 'It started on 03/11/2024, two days ago', phase: 'character' },
      { message: 'A dull pressure', phase: 'radiation' },
      { message: "It doesn't spread anywhere", phase: 'associations' },
      { message: 'I feel a bit sick; my temperature was 37.2 so no fever', phase: 'time_course' },
      { message: 'It comes and goes', phase: 'exacerbating_relieving' },
      { message: 'Paracetamol helps a little, and it is worse with bright light', phase: 'severity' },
      { message: 'About 6 out of 10', phase: 'closing' },
      { message: "No, that's all, thank you", phase: 'completed' },
    ]);
    const summary = await call('clinician_avatar', 'avatar/end_session', { session_id: started.session_id });
    assert.equal(summary.framework, 'SOCRATES');
    assert.equal(summary.consultation_phase, 'completed');
    assert.deepEqual(
      summary.framework_progress.steps.map((step: any) => step.status),
      new Array(8).fill('completed'),
    );
    const lines = findingLines(summary);
    for (const line of ['site: head +', 'onset: started +', 'onset: two days +', 'character: dull +', 'character: pressure +', 'radiation: spread -', 'associations: sick +', 'associations: fever -', 'time_course: comes and goes +', 'exacerbating_relieving: paracetamol +', 'severity: 6 out of 10 +']) {
      assert.ok(lines.includes(line), `${line} in ${lines.join('; ')}`);
    }
    assert.ok(summary.duration_s >= 0);
  });

  test('otherwise: triage says medium, a cough runs Calgary-Cambridge; the PHI guard stops only the identifier', async () => {
    const triage = await call('triage', 'triage/assess', { chief_complaint: 'cough for two weeks', vital_signs: { ...NORMAL_VITALS, temperature_c: 38.3 } });
    assert.equal(triage.urgency, 'medium');
    // A session about a known patient: consent granted through the gateway, checked by the avatar through it too.
    await call('consent', 'consent/grant', { requester: CALLER, patient_ref: 'Patient/cc-1', purpose: 'treatment' });
    const started = await call('clinician_avatar', 'avatar/start_session', {
      patient_case: { chief_complaint: 'cough for two weeks', age: 54, gender: 'female', urgency: triage.urgency },
      persona: PERSONA,
      patient_ref: 'Patient/cc-1',
    });
    assert.equal(started.framework, 'Calgary-Cambridge');
    assert.equal(started.consultation_phase, 'initiating_session');

    const identifier = await rpc(`${gateway.url}/rpc/clinician_avatar`, 'avatar/patient_message', {
      session_id: started.session_id,
      message: "I've got a cough. My NHS number is 943 476 5919 if you need it",
    });
    assert.equal(identifier.error.code, -32012);
    assert.deepEqual(identifier.error.data.findings, [{ detector: 'uk_nhs_number', pointer: '/params/message' }]);
    const unchanged = await call('clinician_avatar', 'avatar/get_status', { session_id: started.session_id });
    assert.equal(unchanged.consultation_phase, 'initiating_session', 'the refused message never reached the avatar');

    await converse(started.session_id, [
      { message: "I've got a cough that keeps me up at night", phase: 'gathering_information' },
      { message: 'It started two weeks ago and is getting worse', phase: 'patient_perspective' },
      { message: "I'm worried it might be pneumonia, I'm 54 and my dad had it", phase: 'explanation_planning' },
      { message: 'Yes, that makes sense', phase: 'closing' },
      { message: "No, that's everything", phase: 'completed' },
    ]);
    const summary = await call('clinician_avatar', 'avatar/end_session', { session_id: started.session_id });
    assert.equal(summary.framework, 'Calgary-Cambridge');
    assert.equal(summary.consultation_phase, 'completed');
    const lines = findingLines(summary);
    for (const line of ["initiating_session: i've got +", 'gathering_information: started +', 'gathering_information: two weeks +', 'patient_perspective: worried +', 'explanation_planning: yes +', 'explanation_planning: makes sense +']) {
      assert.ok(lines.includes(line), `${line} in ${lines.join('; ')}`);
    }
    const ended = await rpc(`${gateway.url}/rpc/clinician_avatar`, 'avatar/get_status', { session_id: started.session_id });
    assert.equal(ended.error.code, -32013, 'an ended session is gone');
  });

  test('a red flag during the consultation escalates through the gateway as well', async () => {
    const started = await call('clinician_avatar', 'avatar/start_session', {
      patient_case: { chief_complaint: 'chest tightness', age: 58, gender: 'male', urgency: 'high' },
      persona: PERSONA,
    });
    assert.equal(started.framework, 'SOCRATES');
    const turn = await call('clinician_avatar', 'avatar/patient_message', { session_id: started.session_id, message: 'It is a crushing chest pain going into my arm' });
    assert.equal(turn.consultation_phase, 'escalated');
    assert.deepEqual(turn.red_flags, ['cardiac_chest_pain']);
    const summary = await call('clinician_avatar', 'avatar/end_session', { session_id: started.session_id });
    assert.equal(summary.consultation_phase, 'escalated');
  });
});
