import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { applyPatientMessage, newConsultation, openingOf, phaseOf, progressOf } from '../../../../src/mesh/agents/avatar/consultation.ts';
import type { FrameworkName } from '../../../../src/mesh/agents/avatar/frameworks.ts';

/** Plays `replies` and returns the phase after each one. */
function play(framework: FrameworkName, replies: readonly string[]) {
  const consultation = newConsultation(framework);
  const phases = replies.map((reply) => {
    applyPatientMessage(consultation, reply);
    return phaseOf(consultation);
  });
  return { consultation, phases };
}

describe('consultation engine', () => {
  test('SOCRATES walks every step in order, then closing and completed', () => {
    const { phases, consultation } = play('SOCRATES', [
      'In my chest',
      'It started yesterday',
      'It is dull',
      'It goes down my left side',
      'I feel a bit sick',
      'It is constant',
      'Resting helps',
      'About 6/10',
      'No, that is all',
    ]);
    assert.deepEqual(phases, ['onset', 'character', 'radiation', 'associations', 'time_course', 'exacerbating_relieving', 'severity', 'closing', 'completed']);
    assert.equal(progressOf(consultation).completed, 8);
  });

  test('ABCDE walks airway, breathing, circulation, disability and exposure', () => {
    const { phases } = play('ABCDE', ['I can speak', 'Breathing is fast', 'My heart is racing', "I'm awake", 'No rash or injury', 'Thanks']);
    assert.deepEqual(phases, ['breathing', 'circulation', 'disability', 'exposure', 'closing', 'completed']);
  });

  test('Calgary-Cambridge walks its stages and only takes an agreement when the plan is proposed', () => {
    const { phases } = play('Calgary-Cambridge', ['ok', "I've got a cough", 'It started two weeks ago', "I'm worried it is asthma", 'Yes, that makes sense', 'Bye']);
    assert.deepEqual(phases, ['initiating_session', 'gathering_information', 'patient_perspective', 'explanation_planning', 'closing', 'completed']);
  });

  test('one reply answering several steps advances past all of them', () => {
    const { phases } = play('SOCRATES', ['A sharp pain in my chest that started this morning']);
    assert.deepEqual(phases, ['radiation']);
  });

  test('the chief complaint answers what it covers: "headache for two days" is not asked where or when', () => {
    const consultation = newConsultation('SOCRATES', 'headache for two days');
    assert.equal(phaseOf(consultation), 'character');
    assert.equal(
      openingOf(consultation, { name: 'Dr Ada', role: 'your virtual GP' }),
      "Hello, I'm Dr Ada, your virtual GP. I understand that the pain is in your head, and it began about two days ago. What does the pain feel like — sharp, dull, burning, throbbing?",
    );
    assert.deepEqual(consultation.findings, [
      { step: 'site', finding: 'head', present: true },
      { step: 'onset', finding: 'two days', present: true },
    ]);
  });

  test('an opening answer covering two steps is acknowledged in a clinician\'s words, and both steps are skipped', () => {
    const consultation = newConsultation('SOCRATES', 'pain');
    assert.match(openingOf(consultation, { name: 'Dr Ada', role: 'your GP' }), /^Hello, I'm Dr Ada, your GP\. Where exactly is the pain\?$/);
    const turn = applyPatientMessage(consultation, 'My head, it started suddenly two days ago');
    assert.equal(turn.clinician_response, 'Thank you. So the pain is in your head, and it came on suddenly, about two days ago. What does the pain feel like — sharp, dull, burning, throbbing?');
    assert.doesNotMatch(turn.clinician_response, /mentioned|started, ago/);
    assert.equal(phaseOf(consultation), 'character');
  });

  test('each SOCRATES answer is read back as a sentence', () => {
    const consultation = newConsultation('SOCRATES');
    const replies = ['In my chest', 'It came on gradually', 'Sharp and burning', 'It stays put', 'I feel sick but no fever', 'It comes and goes', 'Nothing helps', 'About 7/10'];
    const answers = replies.map((reply) => applyPatientMessage(consultation, reply).clinician_response);
    const expected = [
      'Thank you. So the pain is in your chest.',
      'Thank you. So it came on gradually.',
      'Thank you. So it feels sharp and burning.',
      'Thank you. So it stays in one place.',
      "Thank you. So you've also had nausea, but no fever.",
      'Thank you. So it comes and goes.',
      'Thank you. So nothing seems to make a difference.',
      "Thank you. So you'd put it at 7 out of 10.",
    ];
    for (const [index, answer] of answers.entries()) assert.ok(answer.startsWith(`${expected[index]} `), `${answer}\n  expected to start with ${expected[index]}`);
  });

  test('a reply that answers nothing keeps the step and asks again in other words', () => {
    const consultation = newConsultation('SOCRATES');
    const first = applyPatientMessage(consultation, 'hmm');
    const second = applyPatientMessage(consultation, 'I am not sure');
    assert.equal(phaseOf(consultation), 'site');
    assert.notEqual(first.clinician_response, second.clinician_response);
    assert.match(first.clinician_response, /where it hurts/i);
  });

  test('a negated symptom is recorded as absent and answers the associations step', () => {
    const { consultation } = play('SOCRATES', ['chest', 'yesterday', 'dull', 'it does not spread', 'no nausea']);
    assert.deepEqual(consultation.findings.filter((finding) => finding.step === 'associations'), [{ step: 'associations', finding: 'nausea', present: false }]);
    assert.equal(phaseOf(consultation), 'time_course');
  });

  test('a red flag escalates at once with safety advice, whatever the step', () => {
    const consultation = newConsultation('Calgary-Cambridge');
    const turn = applyPatientMessage(consultation, 'my face is drooping and my speech is slurred');
    assert.equal(phaseOf(consultation), 'escalated');
    assert.deepEqual(consultation.redFlags, ['stroke_signs']);
    assert.match(turn.clinician_response, /999/);
    assert.ok(progressOf(consultation).steps.every((step) => step.status !== 'current'));
  });

  test('progress marks the step being asked as current and the rest pending', () => {
    const { consultation } = play('ABCDE', ['I can talk']);
    assert.deepEqual(progressOf(consultation).steps.map((step) => step.status), ['completed', 'current', 'pending', 'pending', 'pending']);
    assert.deepEqual({ ...progressOf(consultation), steps: [] }, { framework: 'ABCDE', steps: [], completed: 1, total: 5 });
  });
});
