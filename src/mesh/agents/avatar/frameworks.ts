/**
 * The three consultation frameworks (contract §10) and their steps, with the questions the clinician
 * asks for each: the first wording, then other wordings when a reply answered nothing.
 */
import { isPainRelated } from './pain-lexicon.ts';

export const FRAMEWORKS = ['ABCDE', 'SOCRATES', 'Calgary-Cambridge'] as const;
export type FrameworkName = (typeof FRAMEWORKS)[number];

export const URGENCIES = ['low', 'medium', 'high', 'critical', 'emergency'] as const;
export type Urgency = (typeof URGENCIES)[number];

/** A step: `key` is its snake_case phase name; `questions` are tried in turn while it stays unanswered. */
export type StepDefinition = { readonly key: string; readonly label: string; readonly questions: readonly [string, ...string[]] };

/** Each framework's steps in the order they are asked. */
export const FRAMEWORK_STEPS: Readonly<Record<FrameworkName, readonly StepDefinition[]>> = {
  SOCRATES: [
    { key: 'site', label: 'Site', questions: ['Where exactly is the pain?', 'Could you point to where it hurts — which part of your body?'] },
    { key: 'onset', label: 'Onset', questions: ['When did it start, and did it come on suddenly or gradually?', 'How long ago did you first notice it?'] },
    { key: 'character', label: 'Character', questions: ['What does the pain feel like — sharp, dull, burning, throbbing?', 'If you had to describe the feeling in one word, what would it be?'] },
    { key: 'radiation', label: 'Radiation', questions: ['Does the pain spread or move anywhere else?', 'Does it stay in one place, or go into your arm, back, jaw or elsewhere?'] },
    { key: 'associations', label: 'Associated symptoms', questions: ['Have you noticed anything else with it, such as nausea, sweating or fever?', 'Are there any other symptoms at all, even ones that seem unrelated?'] },
    { key: 'time_course', label: 'Time course', questions: ['Is it constant, or does it come and go?', 'Since it started, has it been getting better, worse, or staying the same?'] },
    { key: 'exacerbating_relieving', label: 'Exacerbating and relieving factors', questions: ['Does anything make it better or worse?', 'Have you tried anything for it — rest, painkillers, changing position?'] },
    { key: 'severity', label: 'Severity', questions: ['On a scale of 0 to 10, how bad is the pain?', 'Would you call it mild, moderate or severe?'] },
  ],
  ABCDE: [
    { key: 'airway', label: 'Airway', questions: ['Can you talk and swallow normally?', 'Is anything blocking your throat, or are you able to speak in full sentences?'] },
    { key: 'breathing', label: 'Breathing', questions: ['How is your breathing right now?', 'Are you short of breath, wheezing or coughing?'] },
    { key: 'circulation', label: 'Circulation', questions: ['Is your heart racing, or are you bleeding, pale or clammy?', 'Do you feel faint, or has anyone checked your pulse?'] },
    { key: 'disability', label: 'Disability', questions: ['Are you fully awake and do you know where you are?', 'Do you feel confused or drowsy, and do you know your blood sugar?'] },
    { key: 'exposure', label: 'Exposure', questions: ['Do you have any rash, injury, swelling or fever?', 'Is there anything on your skin, or any wound, that I should know about?'] },
  ],
  'Calgary-Cambridge': [
    { key: 'initiating_session', label: 'Initiating the session', questions: ['What brings you here today?', 'In your own words, what is the problem you would like help with?'] },
    { key: 'gathering_information', label: 'Gathering information', questions: ['When did this start, and how has it changed since?', 'How long has this been going on?'] },
    { key: 'patient_perspective', label: 'Ideas, concerns and expectations', questions: ['What do you think is going on, and is anything worrying you about it?', 'What were you hoping we could do for you today?'] },
    { key: 'explanation_planning', label: 'Explanation and planning', questions: ['I suggest we arrange a review with your clinician and you come back if things change. Does that plan make sense to you?', 'Are you happy with that plan?'] },
  ],
};

/**
 * The spec's selection, in this order: ABCDE for critical or emergency urgency; otherwise SOCRATES
 * when the complaint is pain-related (pain-lexicon.ts); otherwise Calgary-Cambridge.
 */
export function selectFramework(chiefComplaint: string, urgency: Urgency): FrameworkName {
  if (urgency === 'critical' || urgency === 'emergency') return 'ABCDE';
  return isPainRelated(chiefComplaint) ? 'SOCRATES' : 'Calgary-Cambridge';
}
