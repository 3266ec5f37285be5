/**
 * The deterministic consultation engine (docs/avatar.md): one session's state and how a patient's
 * message moves it. Pure apart from the clock readings passed in; no Fastify, no storage.
 */
import { extractAnswers, type Finding } from './extract-answers.ts';
import { FRAMEWORK_STEPS, type FrameworkName, type StepDefinition } from './frameworks.ts';
import { detectRedFlags } from './red-flags.ts';
import { understoodSentence } from './acknowledgement.ts';

/** A step's status in `framework_progress`. */
export type StepStatus = 'pending' | 'current' | 'completed';
export type FrameworkProgress = {
  readonly framework: FrameworkName;
  readonly steps: { key: string; label: string; status: StepStatus }[];
  readonly completed: number;
  readonly total: number;
};

/** The mutable state of one consultation. */
export type Consultation = {
  readonly framework: FrameworkName;
  readonly findings: Finding[];
  readonly redFlags: string[];
  /** Turns in a row the current step went unanswered: picks the next wording of its question. */
  unansweredTurns: number;
  /** Set once the patient has been asked whether there is anything else. */
  closingAsked: boolean;
  ended: boolean;
};

/**
 * A consultation at its first open step. For SOCRATES the chief complaint is read like a first reply
 * ("headache for two days" answers site and onset), so the patient is not asked again what the
 * referral already says; ABCDE (an emergency checks everything) and Calgary-Cambridge (it opens by
 * hearing the patient's own words) start from their first step.
 */
export function newConsultation(framework: FrameworkName, chiefComplaint?: string): Consultation {
  const consultation: Consultation = { framework, findings: [], redFlags: [], unansweredTurns: 0, closingAsked: false, ended: false };
  if (framework === 'SOCRATES' && chiefComplaint !== undefined) {
    const steps = FRAMEWORK_STEPS.SOCRATES.map((step) => step.key);
    consultation.findings.push(...extractAnswers(chiefComplaint, steps));
  }
  return consultation;
}

/** The clinician's opening: who they are, what they already understand, and the first open question. */
export function openingOf(consultation: Consultation, persona: { name: string; role: string }): string {
  const understood = understoodSentence(consultation.findings, 'I understand that');
  return [`Hello, I'm ${persona.name}, ${persona.role}.`, understood, currentQuestion(consultation)].filter(Boolean).join(' ');
}

const stepsOf = (consultation: Consultation): readonly StepDefinition[] => FRAMEWORK_STEPS[consultation.framework];

/** A step is complete once it has any finding, present or absent: content, never a turn count. */
function openSteps(consultation: Consultation): StepDefinition[] {
  return stepsOf(consultation).filter((step) => !consultation.findings.some((finding) => finding.step === step.key));
}

/** The phase: the current step's key, then `closing`, `completed`, or `escalated` on a red flag. */
export function phaseOf(consultation: Consultation): string {
  if (consultation.redFlags.length > 0) return 'escalated';
  if (consultation.ended) return 'completed';
  return openSteps(consultation)[0]?.key ?? 'closing';
}

/** `framework_progress` (contract §10): each step's status and the counts. */
export function progressOf(consultation: Consultation): FrameworkProgress {
  const open = openSteps(consultation).map((step) => step.key);
  const current = consultation.redFlags.length > 0 || consultation.ended ? undefined : open[0];
  const steps = stepsOf(consultation).map((step) => ({
    key: step.key,
    label: step.label,
    status: (open.includes(step.key) ? (step.key === current ? 'current' : 'pending') : 'completed') as StepStatus,
  }));
  const completed = steps.filter((step) => step.status === 'completed').length;
  return { framework: consultation.framework, steps, completed, total: steps.length };
}

/** The question for the current step, reworded after each unanswered turn. */
export function currentQuestion(consultation: Consultation): string {
  const step = openSteps(consultation)[0];
  if (step === undefined) return 'Thank you, that gives me a clear picture. Is there anything else you would like to mention before we finish?';
  return step.questions[consultation.unansweredTurns % step.questions.length] as string;
}

/** What one patient message produced. */
export type Turn = { readonly clinician_response: string; readonly findings: readonly Finding[] };

/** "Thank you. So it came on suddenly, about two days ago." */
function acknowledgement(findings: readonly Finding[]): string {
  return ['Thank you.', understoodSentence(findings)].filter(Boolean).join(' ');
}

/**
 * Applies one patient message: red flags first, then extraction against the open steps. The caller
 * refuses messages once the consultation is completed or escalated.
 */
export function applyPatientMessage(consultation: Consultation, message: string): Turn {
  const flags = detectRedFlags(message);
  if (flags.length > 0) {
    consultation.redFlags.push(...flags.map((flag) => flag.flag));
    return { clinician_response: `I'm concerned by what you describe. ${flags.map((flag) => flag.advice).join(' ')}`, findings: [] };
  }
  const open = openSteps(consultation);
  if (open.length === 0) {
    // Closing: the patient had the last word (red flags in it were checked above); the consultation ends.
    consultation.ended = true;
    return { clinician_response: 'Thank you for talking with me. I have summarised our consultation for your clinician. Take care.', findings: [] };
  }
  const findings = extractAnswers(message, open.map((step) => step.key));
  consultation.findings.push(...findings);
  if (findings.length === 0) {
    consultation.unansweredTurns += 1;
    return { clinician_response: `I'm sorry, I didn't quite catch that. ${currentQuestion(consultation)}`, findings };
  }
  consultation.unansweredTurns = 0;
  return { clinician_response: `${acknowledgement(findings)} ${currentQuestion(consultation)}`, findings };
}
