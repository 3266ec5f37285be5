import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { extractAnswers } from '../../../../src/mesh/agents/avatar/extract-answers.ts';
import { FRAMEWORK_STEPS } from '../../../../src/mesh/agents/avatar/frameworks.ts';
import { detectRedFlags } from '../../../../src/mesh/agents/avatar/red-flags.ts';

const keys = (framework: keyof typeof FRAMEWORK_STEPS) => FRAMEWORK_STEPS[framework].map((step) => step.key);

/** Reply → the steps it answers, as `step:finding` (present) or `step:!finding` (absent). */
const REPLIES: readonly [keyof typeof FRAMEWORK_STEPS, string, readonly string[]][] = [
  ['SOCRATES', 'hello', []],
  ['SOCRATES', "I don't know", []],
  ['SOCRATES', 'It is in my chest and it started two days ago', ['site:chest', 'onset:started', 'onset:ago', 'onset:two days']],
  ['SOCRATES', 'Sharp, and no nausea', ['character:sharp', 'associations:!nausea']],
  ['SOCRATES', 'I feel sick and sweaty', ['associations:sick', 'associations:sweat']],
  ['SOCRATES', "It doesn't spread anywhere", ['radiation:!spread']],
  ['SOCRATES', 'It stays in one place', ['radiation:!stays in one place']],
  ['SOCRATES', 'Nothing else really', ['associations:!nothing else']],
  ['SOCRATES', 'It comes and goes', ['time_course:comes and goes']],
  ['SOCRATES', 'Paracetamol helps a bit', ['exacerbating_relieving:helps', 'exacerbating_relieving:paracetamol']],
  ['SOCRATES', 'About 7/10', ['severity:7/10']],
  ['SOCRATES', 'I would say 6 out of 10, moderate', ['severity:moderate', 'severity:6 out of 10']],
  ['SOCRATES', 'no chest pain in my chest now', ['site:chest']],
  ['ABCDE', 'I can talk fine and my breathing is ok', ['airway:talk', 'breathing:breathing']],
  ['ABCDE', 'No bleeding and my heart is not racing', ['circulation:heart', 'circulation:!racing', 'circulation:!bleeding']],
  ['ABCDE', "I'm not confused", ['disability:!confused']],
  ['ABCDE', 'There is no rash', ['exposure:!rash']],
  ['Calgary-Cambridge', "I've got a cough and I'm worried it's serious", ['initiating_session:i\'ve got', 'initiating_session:i\'m', 'patient_perspective:worried']],
  ['Calgary-Cambridge', 'ok', []],
];

describe('answer extraction', () => {
  for (const [framework, reply, expected] of REPLIES) {
    test(`in ${framework}, "${reply}" answers ${expected.length === 0 ? 'nothing' : expected.join(', ')}`, () => {
      const found = extractAnswers(reply, keys(framework)).map((finding) => `${finding.step}:${finding.present ? '' : '!'}${finding.finding}`);
      assert.deepEqual(found, expected);
    });
  }

  test('an agreement answers the plan only while the plan is the step being asked', () => {
    assert.deepEqual(extractAnswers('ok, that makes sense', ['explanation_planning']).map((finding) => finding.step), ['explanation_planning', 'explanation_planning']);
    assert.deepEqual(extractAnswers('ok, that makes sense', ['initiating_session', 'explanation_planning']), []);
  });
});

describe('red flags', () => {
  const CASES: readonly [string, readonly string[]][] = [
    ['I have crushing chest pain', ['cardiac_chest_pain']],
    ["I can't breathe", ['cannot_breathe']],
    ['my face is drooping and I have slurred speech', ['stroke_signs']],
    ['sudden arm weakness', ['stroke_signs']],
    ['I have been having suicidal thoughts', ['suicidal_thoughts']],
    ['I want to end my life', ['suicidal_thoughts']],
    ['no slurred speech and no arm weakness', []],
    ['chest pain that is dull', []],
  ];
  for (const [text, flags] of CASES) {
    test(`"${text}" raises ${flags.length === 0 ? 'no red flag' : flags.join(', ')}`, () => {
      assert.deepEqual(detectRedFlags(text).map((rule) => rule.flag), flags);
    });
  }

  test('every red flag comes with safety advice', () => {
    for (const rule of detectRedFlags('crushing chest, cannot breathe, slurred speech, suicidal')) assert.ok(rule.advice.length > 20, rule.flag);
  });
});
