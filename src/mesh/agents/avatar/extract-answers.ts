/**
 * Extracts what a patient's reply answers (docs/avatar.md, "Extraction rules"): for each open step,
 * the findings the reply gives, present or absent. Pure; one reply may answer several steps or none.
 */
import { findPhrases, mentionsAffirmed } from './phrase-match.ts';
import { STEP_CUES } from './step-cues.ts';

/** One finding: what the patient said for a step, and whether it is present or denied. */
export type Finding = { readonly step: string; readonly finding: string; readonly present: boolean };

/**
 * The findings `message` gives for the open `steps` (keys, the first being the one asked), in step
 * order; empty when it answers none.
 */
export function extractAnswers(message: string, steps: readonly string[]): Finding[] {
  const findings: Finding[] = [];
  for (const [index, step] of steps.entries()) {
    const cues = STEP_CUES[step];
    if (cues === undefined) throw new Error(`no extraction cues for step ${step}`);
    if (cues.currentOnly && index > 0) continue;
    for (const hit of findPhrases(message, cues.phrases)) {
      const finding = cues.names?.[hit.phrase] ?? hit.phrase.replace(/\*$/, '');
      if (findings.some((known) => known.step === step && known.finding === finding)) continue;
      if (!hit.negated) findings.push({ step, finding, present: true });
      else if (cues.negatable) findings.push({ step, finding, present: false });
    }
    for (const pattern of cues.patterns ?? []) {
      const match = pattern.exec(message);
      if (match) findings.push({ step, finding: match[0].toLowerCase(), present: true });
    }
    // A denial ("nothing else") is said affirmatively: it answers the whole step in the negative.
    const denial = (cues.denials ?? []).find((phrase) => mentionsAffirmed(message, [phrase]));
    if (denial !== undefined) findings.push({ step, finding: denial, present: false });
  }
  return findings;
}
