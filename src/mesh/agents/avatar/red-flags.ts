/**
 * Red flags that end a consultation at once (docs/avatar.md, "Red flags"): each with the safety advice
 * the clinician gives. A negated mention ("no slurred speech") does not escalate.
 */
import { findPhrases } from './phrase-match.ts';

/** A red flag: its name, the phrases that raise it, and the advice given. */
export type RedFlagRule = { readonly flag: string; readonly phrases: readonly string[]; readonly advice: string };

const CALL_999 = 'Please call 999 (or your local emergency number) now, or ask someone nearby to call for you.';

/** The red-flag table (docs/avatar.md lists it). */
export const AVATAR_RED_FLAGS: readonly RedFlagRule[] = [
  { flag: 'cardiac_chest_pain', phrases: ['crushing chest', 'crushing pain', 'chest pain spreading to my arm', 'elephant on my chest'], advice: `Crushing chest pain can be a heart attack. ${CALL_999} Sit down and rest while you wait.` },
  { flag: 'cannot_breathe', phrases: ["can't breathe", 'cannot breathe', 'can not breathe', 'unable to breathe', 'struggling to breathe', 'choking', 'lips are blue', 'lips turning blue'], advice: `Severe difficulty breathing is an emergency. ${CALL_999}` },
  { flag: 'stroke_signs', phrases: ['face drooping', 'face is drooping', 'facial droop', 'slurred speech', 'speech is slurred', 'arm weakness', 'weak arm', "can't lift my arm", 'cannot lift my arm', 'one side of my face'], advice: `These can be signs of a stroke (FAST: face, arms, speech, time). ${CALL_999} Note the time the symptoms started.` },
  { flag: 'suicidal_thoughts', phrases: ['suicidal', 'kill myself', 'end my life', 'want to die', 'take my own life', 'hurt myself', 'self-harm', 'self harm'], advice: 'Thank you for telling me; you deserve support right now. If you are in immediate danger call 999. You can also call Samaritans on 116 123, any time, free.' },
  { flag: 'thunderclap_headache', phrases: ['worst headache', 'thunderclap'], advice: `A sudden, severe headache needs urgent assessment. ${CALL_999}` },
  { flag: 'anaphylaxis', phrases: ['throat is swelling', 'throat swelling', 'tongue swelling', 'lips swelling', 'anaphylaxis'], advice: `This may be a severe allergic reaction. Use an adrenaline auto-injector if you have one. ${CALL_999}` },
  { flag: 'collapse_or_seizure', phrases: ['passed out', 'unconscious', 'seizure', 'fitting', 'collapsed'], advice: `Loss of consciousness or a seizure needs emergency care. ${CALL_999}` },
  { flag: 'major_bleeding', phrases: ['vomiting blood', 'coughing up blood', "bleeding won't stop", 'severe bleeding'], advice: `Heavy bleeding is an emergency. Press firmly on any wound. ${CALL_999}` },
];

/** The red flags affirmed in `text`, in table order. */
export function detectRedFlags(text: string): RedFlagRule[] {
  return AVATAR_RED_FLAGS.filter((rule) => findPhrases(text, rule.phrases).some((hit) => !hit.negated));
}
