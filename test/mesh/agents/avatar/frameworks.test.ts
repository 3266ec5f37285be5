import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { selectFramework, URGENCIES, type Urgency } from '../../../../src/mesh/agents/avatar/frameworks.ts';
import { isPainRelated, PAIN_LEXICON } from '../../../../src/mesh/agents/avatar/pain-lexicon.ts';

/** Complaint → framework for low, medium and high urgency; critical and emergency are always ABCDE. */
const COMPLAINTS: readonly [string, 'SOCRATES' | 'Calgary-Cambridge'][] = [
  ['chest tightness since this morning', 'SOCRATES'],
  ['headache', 'SOCRATES'],
  ['stomach ache after eating', 'SOCRATES'],
  ['sore throat', 'SOCRATES'],
  ['lower back pain', 'SOCRATES'],
  ['it hurts when I walk', 'SOCRATES'],
  ['aching legs', 'SOCRATES'],
  ['period cramps', 'SOCRATES'],
  ['burning when passing urine', 'SOCRATES'],
  ['Painful knee', 'SOCRATES'],
  ['no pain, just a cough', 'Calgary-Cambridge'],
  ['a rash that is not painful', 'Calgary-Cambridge'],
  ['tired all the time, without any headache', 'Calgary-Cambridge'],
  ['feeling low', 'Calgary-Cambridge'],
  ['cough for two weeks', 'Calgary-Cambridge'],
  ['no fever but my ear hurts', 'SOCRATES'],
  ['a painless lump in my neck', 'Calgary-Cambridge'],
];

describe('framework selection', () => {
  for (const [complaint, expected] of COMPLAINTS) {
    for (const urgency of URGENCIES) {
      const want = urgency === 'critical' || urgency === 'emergency' ? 'ABCDE' : expected;
      test(`"${complaint}" at ${urgency} urgency uses ${want}`, () => {
        assert.equal(selectFramework(complaint, urgency as Urgency), want);
      });
    }
  }

  test('a negation only reaches pain words in its own clause and close before them', () => {
    assert.equal(isPainRelated('no pain'), false);
    assert.equal(isPainRelated('not painful'), false);
    assert.equal(isPainRelated('no vomiting, but the pain is bad'), true);
    assert.equal(isPainRelated('no problems eating, sleeping or walking until the pain started'), true);
  });
});

describe('pain lexicon documentation', () => {
  test('docs/avatar.md lists every phrase of the pain lexicon', () => {
    const docs = readFileSync(fileURLToPath(new URL('../../../../docs/avatar.md', import.meta.url)), 'utf8');
    for (const phrase of PAIN_LEXICON) assert.ok(docs.includes(`\`${phrase}\``), phrase);
  });
});
