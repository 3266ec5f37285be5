/**
 * The three consultation frameworks (contract §10) and their steps, with the questions the clinician
 * asks for each: the first wording, then other wordings when a reply answered nothing.
 */
import frameworkSteps from './framework-steps.json' with { type: 'json' };
import { isPainRelated } from './pain-lexicon.ts';

export const FRAMEWORKS = ['ABCDE', 'SOCRATES', 'Calgary-Cambridge'] as const;
export type FrameworkName = (typeof FRAMEWORKS)[number];

export const URGENCIES = ['low', 'medium', 'high', 'critical', 'emergency'] as const;
export type Urgency = (typeof URGENCIES)[number];

/** A step: `key` is its snake_case phase name; `questions` are tried in turn while it stays unanswered. */
export type StepDefinition = { readonly key: string; readonly label: string; readonly questions: readonly [string, ...string[]] };

/**
 * Each framework's steps in the order they are asked, from framework-steps.json (the wording is
 * content, kept as data); a step without a question stops the module from loading.
 */
export const FRAMEWORK_STEPS: Readonly<Record<FrameworkName, readonly StepDefinition[]>> = {
  SOCRATES: checkedSteps('SOCRATES'),
  ABCDE: checkedSteps('ABCDE'),
  'Calgary-Cambridge': checkedSteps('Calgary-Cambridge'),
};

function checkedSteps(framework: FrameworkName): StepDefinition[] {
  return frameworkSteps[framework].map(({ key, label, questions: [first, ...others] }) => {
    if (first === undefined) throw new Error(`framework-steps.json: ${framework} step ${key} has no question`);
    return { key, label, questions: [first, ...others] };
  });
}

/**
 * The spec's selection, in this order: ABCDE for critical or emergency urgency; otherwise SOCRATES
 * when the complaint is pain-related (pain-lexicon.ts); otherwise Calgary-Cambridge.
 */
export function selectFramework(chiefComplaint: string, urgency: Urgency): FrameworkName {
  if (urgency === 'critical' || urgency === 'emergency') return 'ABCDE';
  return isPainRelated(chiefComplaint) ? 'SOCRATES' : 'Calgary-Cambridge';
}
