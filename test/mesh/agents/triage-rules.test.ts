import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { assessTriage, news2, redFlags } from '../../../src/mesh/agents/triage/triage-rules.ts';

const NORMAL = { respiratory_rate: 16, oxygen_saturation: 98, systolic_bp: 125, heart_rate: 72, consciousness: 'alert', temperature_c: 36.8 } as const;

describe('triage rules', () => {
  test('normal vital signs score NEWS2 0', () => {
    const score = news2(NORMAL);
    assert.equal(score.total, 0);
    assert.deepEqual(score.missing, []);
    assert.equal(score.red_score, false);
  });

  const bands: [keyof typeof NORMAL, number, number][] = [
    ['respiratory_rate', 8, 3], ['respiratory_rate', 9, 1], ['respiratory_rate', 11, 1], ['respiratory_rate', 12, 0], ['respiratory_rate', 20, 0],
    ['respiratory_rate', 21, 2], ['respiratory_rate', 24, 2], ['respiratory_rate', 25, 3],
    ['oxygen_saturation', 91, 3], ['oxygen_saturation', 92, 2], ['oxygen_saturation', 93, 2], ['oxygen_saturation', 94, 1], ['oxygen_saturation', 95, 1], ['oxygen_saturation', 96, 0],
    ['systolic_bp', 90, 3], ['systolic_bp', 91, 2], ['systolic_bp', 100, 2], ['systolic_bp', 101, 1], ['systolic_bp', 110, 1], ['systolic_bp', 111, 0], ['systolic_bp', 219, 0], ['systolic_bp', 220, 3],
    ['heart_rate', 40, 3], ['heart_rate', 41, 1], ['heart_rate', 50, 1], ['heart_rate', 51, 0], ['heart_rate', 90, 0], ['heart_rate', 91, 1], ['heart_rate', 110, 1], ['heart_rate', 111, 2], ['heart_rate', 130, 2], ['heart_rate', 131, 3],
    ['temperature_c', 35.0, 3], ['temperature_c', 35.1, 1], ['temperature_c', 36.0, 1], ['temperature_c', 36.1, 0], ['temperature_c', 38.0, 0], ['temperature_c', 38.1, 1], ['temperature_c', 39.0, 1], ['temperature_c', 39.1, 2],
  ];
  for (const [vital, value, score] of bands) {
    test(`${vital} ${value} scores ${score} (NEWS2 band edge)`, () => {
      assert.equal(news2({ ...NORMAL, [vital]: value }).components[vital], score);
    });
  }

  test('any consciousness other than alert scores 3; supplemental oxygen scores 2', () => {
    assert.equal(news2({ ...NORMAL, consciousness: 'confused' }).components.consciousness, 3);
    assert.equal(news2({ ...NORMAL, supplemental_oxygen: true }).total, 2);
  });

  test('missing vital signs are listed and not scored', () => {
    assert.deepEqual(news2({ heart_rate: 72 }).missing, ['respiratory_rate', 'oxygen_saturation', 'systolic_bp', 'temperature_c', 'consciousness']);
  });

  test('urgency follows the NEWS2 total: 0 low, 1–4 medium, 5–6 high, 7–8 critical, ≥ 9 emergency', () => {
    assert.equal(assessTriage({ chief_complaint: 'sore knee', vital_signs: NORMAL }).urgency, 'low');
    assert.equal(assessTriage({ chief_complaint: 'sore knee', vital_signs: { ...NORMAL, heart_rate: 95 } }).urgency, 'medium');
    assert.equal(assessTriage({ chief_complaint: 'sore knee', vital_signs: { ...NORMAL, heart_rate: 115, respiratory_rate: 22, oxygen_saturation: 95 } }).urgency, 'high');
    assert.equal(assessTriage({ chief_complaint: 'sore knee', vital_signs: { ...NORMAL, heart_rate: 115, respiratory_rate: 22, oxygen_saturation: 94, systolic_bp: 105, temperature_c: 38.5 } }).urgency, 'critical');
    assert.equal(assessTriage({ chief_complaint: 'sore knee', vital_signs: { ...NORMAL, heart_rate: 135, respiratory_rate: 26, oxygen_saturation: 92, temperature_c: 39.5 } }).urgency, 'emergency');
  });

  test('a single parameter scoring 3 makes it at least high', () => {
    assert.equal(assessTriage({ chief_complaint: 'tired', vital_signs: { ...NORMAL, systolic_bp: 88 } }).urgency, 'high');
  });

  test('unresponsive is an emergency whatever the total', () => {
    assert.equal(assessTriage({ chief_complaint: 'found on floor', vital_signs: { consciousness: 'unresponsive' } }).urgency, 'emergency');
  });

  test('red-flag complaints set a floor: chest pain high, anaphylaxis emergency', () => {
    const chest = assessTriage({ chief_complaint: 'Crushing CHEST PAIN since an hour', vital_signs: NORMAL });
    assert.equal(chest.urgency, 'high');
    assert.deepEqual(chest.red_flags, ['chest_pain']);
    assert.equal(assessTriage({ chief_complaint: 'anaphylaxis after peanuts', vital_signs: NORMAL }).urgency, 'emergency');
    assert.deepEqual(redFlags('a mild cough'), []);
    assert.deepEqual(redFlags('the chest painting class'), [], 'phrases match whole words');
  });

  test('the assessment says why and what to do', () => {
    const result = assessTriage({ chief_complaint: 'stroke symptoms, facial droop', vital_signs: { ...NORMAL, heart_rate: 95 } });
    assert.equal(result.urgency, 'high');
    assert.ok(result.reasons.includes('red flag: stroke_signs'));
    assert.match(result.recommended_action, /within the hour/);
    assert.equal(result.rules_version, 'ward-triage-1');
  });
});
