/**
 * Rule-based urgency from a chief complaint and vital signs (docs/mesh.md, "Triage rules"). Pure and
 * deterministic. The vital-sign scores are the Royal College of Physicians' NEWS2 bands (scale 1 for
 * SpO2); the complaint rules are keyword red flags. Decision support for routing, not a diagnosis.
 */

export const TRIAGE_RULES_VERSION = 'ward-triage-1';

export type Urgency = 'low' | 'medium' | 'high' | 'critical' | 'emergency';
export type Consciousness = 'alert' | 'confused' | 'voice' | 'pain' | 'unresponsive';

export type VitalSigns = {
  readonly respiratory_rate?: number;
  readonly oxygen_saturation?: number;
  readonly supplemental_oxygen?: boolean;
  readonly systolic_bp?: number;
  readonly heart_rate?: number;
  readonly consciousness?: Consciousness;
  readonly temperature_c?: number;
};

export type TriageInput = { readonly chief_complaint: string; readonly vital_signs?: VitalSigns };

type ScoredVital = Exclude<keyof VitalSigns, 'supplemental_oxygen'> | 'supplemental_oxygen';

/** One band: values up to `max` (inclusive) score `score`. Ordered; the last band has max Infinity. */
type Band = { readonly max: number; readonly score: number };

const BANDS: Readonly<Record<'respiratory_rate' | 'oxygen_saturation' | 'systolic_bp' | 'heart_rate' | 'temperature_c', readonly Band[]>> = {
  respiratory_rate: [{ max: 8, score: 3 }, { max: 11, score: 1 }, { max: 20, score: 0 }, { max: 24, score: 2 }, { max: Infinity, score: 3 }],
  oxygen_saturation: [{ max: 91, score: 3 }, { max: 93, score: 2 }, { max: 95, score: 1 }, { max: Infinity, score: 0 }],
  systolic_bp: [{ max: 90, score: 3 }, { max: 100, score: 2 }, { max: 110, score: 1 }, { max: 219, score: 0 }, { max: Infinity, score: 3 }],
  heart_rate: [{ max: 40, score: 3 }, { max: 50, score: 1 }, { max: 90, score: 0 }, { max: 110, score: 1 }, { max: 130, score: 2 }, { max: Infinity, score: 3 }],
  temperature_c: [{ max: 35.0, score: 3 }, { max: 36.0, score: 1 }, { max: 38.0, score: 0 }, { max: 39.0, score: 1 }, { max: Infinity, score: 2 }],
};

function bandScore(bands: readonly Band[], value: number): number {
  return (bands.find((band) => value <= band.max) as Band).score;
}

export type News2 = {
  readonly total: number;
  readonly components: Partial<Record<ScoredVital, number>>;
  /** Parameters not given: the total is a lower bound when any are missing. */
  readonly missing: readonly ScoredVital[];
  /** A single parameter scoring 3 (NEWS2's "red score"). */
  readonly red_score: boolean;
};

/** NEWS2 from whatever vital signs are present. */
export function news2(vitals: VitalSigns = {}): News2 {
  const components: Partial<Record<ScoredVital, number>> = {};
  const missing: ScoredVital[] = [];
  for (const key of Object.keys(BANDS) as (keyof typeof BANDS)[]) {
    const value = vitals[key];
    if (value === undefined) missing.push(key);
    else components[key] = bandScore(BANDS[key], value);
  }
  if (vitals.consciousness === undefined) missing.push('consciousness');
  else components.consciousness = vitals.consciousness === 'alert' ? 0 : 3;
  if (vitals.supplemental_oxygen !== undefined) components.supplemental_oxygen = vitals.supplemental_oxygen ? 2 : 0;
  const scores = Object.values(components) as number[];
  return {
    total: scores.reduce((sum, score) => sum + score, 0),
    components,
    missing,
    red_score: scores.some((score) => score === 3),
  };
}

/** Complaint keywords and the urgency floor each sets. Matched case-insensitively as whole phrases. */
export const RED_FLAGS: readonly { readonly flag: string; readonly urgency: Urgency; readonly phrases: readonly string[] }[] = [
  { flag: 'cardiac_arrest', urgency: 'emergency', phrases: ['cardiac arrest', 'no pulse', 'not breathing', 'stopped breathing'] },
  { flag: 'anaphylaxis', urgency: 'emergency', phrases: ['anaphylaxis', 'anaphylactic', 'throat swelling'] },
  { flag: 'major_haemorrhage', urgency: 'emergency', phrases: ['severe bleeding', 'haemorrhage', 'hemorrhage', 'vomiting blood'] },
  { flag: 'seizure', urgency: 'emergency', phrases: ['seizure', 'fitting', 'convulsion'] },
  { flag: 'chest_pain', urgency: 'high', phrases: ['chest pain', 'chest tightness', 'crushing chest'] },
  { flag: 'stroke_signs', urgency: 'high', phrases: ['stroke', 'facial droop', 'face drooping', 'slurred speech', 'arm weakness', 'one-sided weakness'] },
  { flag: 'breathing_difficulty', urgency: 'high', phrases: ['shortness of breath', 'difficulty breathing', 'short of breath', 'breathless'] },
  { flag: 'sudden_severe_headache', urgency: 'high', phrases: ['worst headache', 'thunderclap headache', 'sudden severe headache'] },
  { flag: 'self_harm_risk', urgency: 'high', phrases: ['suicidal', 'overdose', 'self-harm', 'self harm'] },
  { flag: 'sepsis_concern', urgency: 'medium', phrases: ['fever', 'rigors', 'feeling very unwell'] },
];

const URGENCY_ORDER: readonly Urgency[] = ['low', 'medium', 'high', 'critical', 'emergency'];
const atLeast = (a: Urgency, b: Urgency): Urgency => (URGENCY_ORDER.indexOf(a) >= URGENCY_ORDER.indexOf(b) ? a : b);

const ACTIONS: Readonly<Record<Urgency, string>> = {
  emergency: 'Emergency response now: call the resuscitation team or emergency services.',
  critical: 'Emergency assessment by a clinical team with critical-care competencies.',
  high: 'Urgent review by a clinician within the hour.',
  medium: 'Assessment by a registered clinician; increase observation frequency.',
  low: 'Routine care; continue routine observations.',
};

export function redFlags(complaint: string): { flag: string; urgency: Urgency }[] {
  const text = ` ${complaint.toLowerCase().replace(/[^a-z0-9-]+/g, ' ')} `;
  return RED_FLAGS.filter((rule) => rule.phrases.some((phrase) => text.includes(` ${phrase} `))).map(({ flag, urgency }) => ({ flag, urgency }));
}

export type TriageAssessment = {
  readonly urgency: Urgency;
  readonly news2: News2;
  readonly red_flags: readonly string[];
  readonly reasons: readonly string[];
  readonly recommended_action: string;
  readonly rules_version: string;
};

/**
 * The assessment: the highest urgency any rule gives. NEWS2 total ≥ 9 or unresponsive: emergency;
 * ≥ 7: critical; 5–6 or a single red score: high; 1–4: medium; 0: low. A red-flag complaint raises
 * the urgency to its floor.
 */
export function assessTriage(input: TriageInput): TriageAssessment {
  const score = news2(input.vital_signs);
  const reasons: string[] = [];
  let urgency: Urgency = 'low';
  const raise = (to: Urgency, reason: string) => {
    urgency = atLeast(urgency, to);
    reasons.push(reason);
  };
  if (score.total >= 9) raise('emergency', `NEWS2 ${score.total} ≥ 9`);
  else if (score.total >= 7) raise('critical', `NEWS2 ${score.total} ≥ 7`);
  else if (score.total >= 5) raise('high', `NEWS2 ${score.total} in 5–6`);
  else if (score.total >= 1) raise('medium', `NEWS2 ${score.total} in 1–4`);
  if (score.red_score) raise('high', 'a single vital sign scores 3');
  if (input.vital_signs?.consciousness === 'unresponsive') raise('emergency', 'unresponsive');
  const flags = redFlags(input.chief_complaint);
  for (const { flag, urgency: floor } of flags) raise(floor, `red flag: ${flag}`);
  return {
    urgency,
    news2: score,
    red_flags: flags.map(({ flag }) => flag),
    reasons,
    recommended_action: ACTIONS[urgency],
    rules_version: TRIAGE_RULES_VERSION,
  };
}
