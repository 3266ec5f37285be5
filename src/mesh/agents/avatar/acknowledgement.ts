/**
 * What the clinician says back about what it understood (docs/avatar.md, "Replies"): the findings of
 * a reply as the clauses a clinician would use ("the pain is in your head", "it began suddenly,
 * about two days ago"), not a list of matched words. Pure.
 */
import type { Finding } from './extract-answers.ts';

/** `a`, `a and b`, `a, b and c` (or `or` for what was denied: "no fever or rash"). */
function listOf(items: readonly string[], conjunction = 'and'): string {
  if (items.length <= 1) return items[0] ?? '';
  return `${items.slice(0, -1).join(', ')} ${conjunction} ${items.at(-1) as string}`;
}

const unique = (items: readonly string[]) => [...new Set(items)];

const NUMBER_WORDS = /^(\d+|a|an|one|two|three|few|couple of|several)\s/;
const WHEN_WORDS = ['yesterday', 'today', 'this morning', 'last night', 'overnight'];

function onsetClause(found: readonly string[]): string {
  const manner = found.some((f) => f.startsWith('sudden')) ? 'suddenly' : found.some((f) => f.startsWith('gradual')) ? 'gradually' : '';
  const duration = found.find((f) => NUMBER_WORDS.test(f));
  const when = duration ? `about ${duration} ago` : (WHEN_WORDS.find((word) => found.includes(word)) ?? '');
  if (manner && when) return `it came on ${manner}, ${when}`;
  if (manner) return `it came on ${manner}`;
  if (when) return `it began ${when}`;
  return "you've told me when it began";
}

const TIME_COURSE: ReadonlyArray<[RegExp, string]> = [
  [/^(constant|constantly|all the time|steady|every day)$/, "it's there all the time"],
  [/^(comes and goes|on and off|off and on|intermittent|waves)$/, 'it comes and goes'],
  [/^(getting worse|worse over)$/, "it's getting worse"],
  [/^getting better$/, "it's getting better"],
  [/^same since$/, "it's stayed the same"],
];

function severityClause(found: readonly string[]): string {
  const score = found.find((f) => /\d/.test(f));
  if (score) return `you'd put it at ${score.replace(/\s*(\/|out of)\s*/, ' out of ')}`;
  return `it's ${listOf(found)}`;
}

/** A symptom as a noun: with its article when present ("a fever"), bare when denied ("no fever"). */
const SYMPTOM_NOUNS: ReadonlyArray<[RegExp, string, string]> = [
  [/^(nausea|nauseous|sick)$/, 'nausea', 'nausea'],
  [/^vomit/, 'vomiting', 'vomiting'],
  [/^sweat/, 'sweating', 'sweating'],
  [/^(fever|temperature)$/, 'a fever', 'fever'],
  [/^dizz/, 'dizziness', 'dizziness'],
  [/^cough/, 'a cough', 'cough'],
  [/^(tired|fatigue)$/, 'tiredness', 'tiredness'],
  [/^(shivers|chills)$/, 'chills', 'chills'],
  [/^(breathless|short of breath)$/, 'breathlessness', 'breathlessness'],
  [/^rash$/, 'a rash', 'rash'],
  [/^light sensitivity$/, 'sensitivity to light', 'sensitivity to light'],
];

function symptom(finding: string, present: boolean): string {
  const entry = SYMPTOM_NOUNS.find(([pattern]) => pattern.test(finding));
  return entry ? (present ? entry[1] : entry[2]) : finding;
}

function associationsClause(presentFindings: readonly string[], absentFindings: readonly string[]): string {
  const present = unique(presentFindings.filter((f) => f !== 'other symptoms').map((f) => symptom(f, true)));
  // "nothing else" / "no other symptoms" deny the step as a whole, not a symptom to name.
  const denied = unique(absentFindings.filter((f) => !/nothing|other/.test(f)).map((f) => symptom(f, false)));
  if (present.length > 0 && denied.length > 0) return `you've also had ${listOf(present)}, but no ${listOf(denied, 'or')}`;
  if (present.length > 0) return `you've also had ${listOf(present)}`;
  if (denied.length > 0) return `you've had no ${listOf(denied, 'or')}`;
  return "you haven't noticed anything else";
}

/** What a step's findings say, as a clause; steps without their own wording name what was covered. */
const CLAUSES: Readonly<Record<string, (present: string[], absent: string[]) => string>> = {
  site: (present) => `the pain is in your ${listOf(present)}`,
  onset: (present) => onsetClause(present),
  character: (present) => `it feels ${listOf(present)}`,
  radiation: (present) => (present.length > 0 ? 'it spreads beyond where it started' : 'it stays in one place'),
  associations: associationsClause,
  time_course: (present) => listOf(unique(present.map((f) => TIME_COURSE.find(([pattern]) => pattern.test(f))?.[1] ?? "you've told me how it has gone"))),
  exacerbating_relieving: (present) => (present.length > 0 ? "you've told me what affects it" : 'nothing seems to make a difference'),
  severity: (present) => severityClause(present),
  airway: () => "you've told me about talking and swallowing",
  breathing: () => "you've told me about your breathing",
  circulation: () => "you've told me about your heart and circulation",
  disability: () => "you've told me how alert you feel",
  exposure: () => "you've told me about your skin and any injury",
  initiating_session: () => "you've told me what brings you here",
  gathering_information: () => "you've told me how it has developed",
  patient_perspective: () => "you've shared what you think and what worries you",
  explanation_planning: () => "we're agreed on the plan",
};

/** One clause per step the findings touch, in the order given. */
function understoodClauses(findings: readonly Finding[]): string[] {
  const steps = unique(findings.map((finding) => finding.step));
  return steps.map((step) => {
    const ofStep = findings.filter((finding) => finding.step === step);
    const present = unique(ofStep.filter((f) => f.present).map((f) => f.finding));
    const absent = unique(ofStep.filter((f) => !f.present).map((f) => f.finding));
    return (CLAUSES[step] ?? (() => "you've answered that"))(present, absent);
  });
}

/** "So the pain is in your head, and it began about two days ago." — or '' when nothing was understood. */
export function understoodSentence(findings: readonly Finding[], lead = 'So'): string {
  const clauses = understoodClauses(findings);
  if (clauses.length === 0) return '';
  const body = clauses.length === 1 ? clauses[0] : `${clauses.slice(0, -1).join(', ')}, and ${clauses.at(-1) as string}`;
  return `${lead} ${body}.`;
}
