/**
 * The pain lexicon that selects SOCRATES (docs/avatar.md, "Pain lexicon"). A complaint is
 * pain-related when it mentions one of these phrases without a negation before it, so "no pain",
 * "not painful" and "without any headache" do not count.
 */
import { mentionsAffirmed } from './phrase-match.ts';

/** Phrases (a trailing `*` matches word endings) that make a complaint pain-related. */
export const PAIN_LEXICON: readonly string[] = [
  'pain', 'pains', 'painful', 'ache', 'aches', 'aching', 'achy', 'hurt*', 'sore', 'soreness', 'tender', 'cramp*', 'burning', 'stinging',
  'throbbing', 'stabbing', 'sharp', 'headache', 'headaches', 'migraine', 'toothache', 'earache', 'backache',
  'stomach ache', 'stomachache', 'bellyache', 'tummy ache', 'sore throat', 'chest tightness', 'tight chest', 'chest pressure',
  'back pain', 'colic', 'sciatica', 'angina', 'agony', 'twinge',
];

/** True when the complaint names pain that is not negated. */
export function isPainRelated(complaint: string): boolean {
  return mentionsAffirmed(complaint, PAIN_LEXICON);
}
