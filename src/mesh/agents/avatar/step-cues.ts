/**
 * What counts as an answer to each step (docs/avatar.md, "Extraction rules"): phrases per step, with
 * whether a negated mention is itself an answer (a pertinent negative such as "no nausea", recorded
 * as an absent finding) or is ignored ("no chest pain" tells nothing about the site).
 */

/** The phrases answering one step. `*` at the end of a word matches its endings. */
export type StepCues = {
  readonly phrases: readonly string[];
  /** A negated mention records an absent finding (and answers the step); otherwise it is ignored. */
  readonly negatable: boolean;
  /** Phrases that answer the step as a whole in the negative ("nothing else", "stays put"). */
  readonly denials?: readonly string[];
  /** Extra patterns on the raw text (e.g. "7/10"), always affirmed. */
  readonly patterns?: readonly RegExp[];
  /** Only an answer while this is the step being asked ("ok" agrees to a plan, not to anything else). */
  readonly currentOnly?: boolean;
  /** The finding a phrase records when it is not the phrase itself ("headache" is pain in the head). */
  readonly names?: Readonly<Record<string, string>>;
};

const TIME_PATTERNS = [/\b(\d+|a|an|one|two|three|few|couple of|several)\s+(minute|hour|day|week|month|year)s?\b/i];

/** The cues of every step of every framework, by step key. */
export const STEP_CUES: Readonly<Record<string, StepCues>> = {
  // SOCRATES
  site: {
    negatable: false,
    names: { 'headache*': 'head', 'migraine*': 'head', backache: 'back', toothache: 'tooth', earache: 'ear', 'stomach ache': 'stomach', stomachache: 'stomach', 'tummy ache': 'stomach', bellyache: 'stomach', 'sore throat': 'throat' },
    phrases: ['headache*', 'migraine*', 'backache', 'toothache', 'earache', 'stomach ache', 'stomachache', 'tummy ache', 'bellyache', 'sore throat', 'chest', 'head', 'forehead', 'temple*', 'stomach', 'tummy', 'belly', 'abdomen', 'back', 'throat', 'neck', 'shoulder*', 'arm', 'arms', 'leg', 'legs', 'knee*', 'jaw', 'ear', 'ears', 'tooth', 'teeth', 'side', 'hip', 'hips', 'foot', 'feet', 'hand', 'hands', 'pelvis', 'groin', 'eye', 'eyes'],
  },
  onset: {
    negatable: false,
    phrases: ['started', 'start', 'began', 'begun', 'came on', 'since', 'ago', 'yesterday', 'today', 'this morning', 'last night', 'suddenly', 'sudden', 'gradually', 'gradual', 'overnight'],
    patterns: TIME_PATTERNS,
  },
  character: {
    negatable: false,
    phrases: ['sharp', 'dull', 'stabbing', 'burning', 'throbbing', 'aching', 'achy', 'cramping', 'crampy', 'shooting', 'tight', 'tightness', 'pressure', 'squeezing', 'gnawing', 'pounding', 'stinging', 'tingling', 'heavy'],
  },
  radiation: {
    negatable: true,
    phrases: ['spread*', 'radiat*', 'goes down', 'goes up', 'goes into', 'goes to', 'moves to', 'moves into', 'travels', 'go anywhere', 'move anywhere'],
    denials: ['stays in one place', 'stays put', 'stays there', 'just there', 'only there'],
  },
  associations: {
    negatable: true,
    phrases: ['nausea', 'nauseous', 'sick', 'vomit*', 'sweat*', 'fever', 'temperature', 'dizzy', 'dizziness', 'cough*', 'diarrhoea', 'diarrhea', 'rash', 'palpitations', 'tired', 'fatigue', 'shivers', 'chills', 'breathless', 'short of breath', 'blurred vision', 'light sensitivity', 'other symptoms'],
    denials: ['nothing else', 'no other symptoms', 'nothing other'],
  },
  time_course: {
    negatable: false,
    phrases: ['constant', 'constantly', 'all the time', 'comes and goes', 'on and off', 'off and on', 'intermittent', 'getting worse', 'getting better', 'worse over', 'same since', 'steady', 'waves', 'every day', 'lasts'],
  },
  exacerbating_relieving: {
    negatable: true,
    phrases: ['makes it worse', 'makes it better', 'worse when', 'worse if', 'worse with', 'better when', 'better if', 'better with', 'helps', 'help', 'eases', 'relieves', 'paracetamol', 'ibuprofen', 'painkiller*', 'rest*', 'lying down', 'moving', 'eating', 'bending'],
    denials: ['nothing helps', 'nothing makes'],
  },
  severity: {
    negatable: false,
    phrases: ['mild', 'moderate', 'severe', 'unbearable', 'excruciating', 'bearable', 'terrible', 'awful', 'worst'],
    patterns: [/\b(10|[0-9])\s*(\/|out of)\s*10\b/i],
  },
  // ABCDE
  airway: {
    negatable: true,
    phrases: ['talk*', 'speak*', 'swallow*', 'airway', 'choking', 'throat is clear', 'blocked'],
  },
  breathing: {
    negatable: true,
    phrases: ['breathing', 'breath', 'breathe', 'wheez*', 'cough*', 'short of breath', 'breathless', 'inhaler'],
  },
  circulation: {
    negatable: true,
    phrases: ['pulse', 'heart', 'racing', 'palpitations', 'bleeding', 'blood', 'pale', 'clammy', 'faint', 'light-headed', 'lightheaded', 'blood pressure', 'sweaty', 'cold hands'],
  },
  disability: {
    negatable: true,
    phrases: ['confused', 'awake', 'alert', 'drowsy', 'sleepy', 'where i am', 'blood sugar', 'glucose', 'conscious', 'passed out', 'orientated', 'oriented'],
  },
  exposure: {
    negatable: true,
    phrases: ['rash', 'injury', 'injured', 'wound', 'swelling', 'swollen', 'bruise*', 'bruising', 'fever', 'temperature', 'skin', 'cut', 'burn', 'bite'],
  },
  // Calgary-Cambridge
  initiating_session: {
    negatable: false,
    phrases: ["i've got", 'i have', "i've been", 'i am', "i'm", 'because', 'problem', 'issue', 'feeling', 'symptom*', 'come about', 'here about', 'worried about'],
  },
  gathering_information: {
    negatable: false,
    phrases: ['started', 'began', 'since', 'ago', 'yesterday', 'last week', 'getting worse', 'getting better', 'same', 'every day', 'each day', 'on and off', 'comes and goes'],
    patterns: TIME_PATTERNS,
  },
  patient_perspective: {
    negatable: false,
    phrases: ['i think', 'worried', 'worry', 'concerned', 'afraid', 'scared', 'hope', 'hoping', 'expect*', 'i want', 'would like', 'wondering', 'maybe it'],
  },
  explanation_planning: {
    negatable: false,
    currentOnly: true,
    phrases: ['yes', 'yeah', 'okay', 'ok', 'fine', 'makes sense', 'understand', 'sounds good', 'agree', 'happy with', 'that works', 'alright', 'all right'],
  },
};
