/**
 * The PHI scan: walks a request body or query (anything JSON-like) and reports which detectors hit and
 * where, as RFC 6901 JSON pointers. Findings never carry the matched value, so they are safe to return
 * in a 422 PHI_DETECTED envelope and to log.
 */
import {
  TEXT_DETECTORS,
  isFhirPatientDataResource,
  isLabelledValueHit,
  labelledKeyDetector,
  type PhiDetectorName,
} from './detectors.ts';
import { normaliseText, readings } from './normalise.ts';

/** One hit: which detector fired and the JSON pointer of the value (or of the value under the key) that held it. */
export type PhiFinding = { readonly detector: PhiDetectorName; readonly pointer: string };

export type PhiScanOptions = {
  /** Containers nested deeper than this are not descended into. Default 64. */
  readonly maxDepth?: number;
  /** The scan stops once this many findings are collected. Default 20. */
  readonly maxFindings?: number;
};

export const DEFAULT_MAX_DEPTH = 64;
export const DEFAULT_MAX_FINDINGS = 20;
/** JSON inside a string inside a string… is read this many levels deep. */
const MAX_JSON_IN_STRINGS = 2;

type ScanState = {
  readonly findings: PhiFinding[];
  /** How many JSON-in-a-string levels the walk is inside now. */
  jsonInStrings: number;
  readonly seen: Set<string>;
  readonly maxDepth: number;
  readonly maxFindings: number;
};

function newState(options: PhiScanOptions | undefined): ScanState {
  return {
    findings: [],
    jsonInStrings: 0,
    seen: new Set(),
    maxDepth: Math.max(0, options?.maxDepth ?? DEFAULT_MAX_DEPTH),
    maxFindings: Math.max(0, options?.maxFindings ?? DEFAULT_MAX_FINDINGS),
  };
}

const isFull = (state: ScanState): boolean => state.findings.length >= state.maxFindings;

/** Records a finding once per (detector, pointer): a key label and a text detector often agree. */
function add(state: ScanState, detector: PhiDetectorName, pointer: string): void {
  if (isFull(state)) return;
  const id = `${detector}\u0000${pointer}`;
  if (state.seen.has(id)) return;
  state.seen.add(id);
  state.findings.push({ detector, pointer });
}

/** Escapes one reference token of a JSON pointer (RFC 6901 §3: `~` → `~0`, `/` → `~1`). */
export function escapePointerToken(token: string): string {
  return token.replaceAll('~', '~0').replaceAll('/', '~1');
}

function scanText(state: ScanState, text: string, pointer: string, key: string | undefined, depth = 0): void {
  const context = { key };
  // The text as sent, and as it reads once normalised or decoded (normalise.ts): disguised PHI is PHI.
  for (const reading of readings(text)) {
    for (const detector of TEXT_DETECTORS) {
      if (isFull(state)) return;
      if (detector.test(reading, context)) add(state, detector.name, pointer);
    }
  }
  // JSON inside a string ("{\"ssn\": \"…\"}") is walked as JSON (at most two strings deep, and within
  // the depth bound), reported at the string's pointer.
  if (state.jsonInStrings < MAX_JSON_IN_STRINGS && text.length >= 2 && (text[0] === '{' || text[0] === '[')) {
    let inner: unknown;
    try {
      inner = JSON.parse(text);
    } catch {
      return;
    }
    const before = state.findings.length;
    state.jsonInStrings += 1;
    walk(state, inner, '', depth + 1, key, undefined);
    state.jsonInStrings -= 1;
    // Pointers inside the string are not pointers of the request: report them at the string.
    const found = state.findings.splice(before);
    for (const finding of found) add(state, finding.detector, pointer);
  }
}

/** The detector a short string names when it is itself a label ("DOB", "NHS number"), if any. */
function labelIn(value: unknown): PhiDetectorName | undefined {
  return typeof value === 'string' && value.length <= 40 ? labelledKeyDetector(normaliseText(value)) : undefined;
}

/**
 * Visits one value. `key` is the nearest object key above it (array items inherit their array's), which
 * both labels scalars (`{ "ssn": 123456789 }`) and gives detectors context (a `phone` key).
 */
function walk(
  state: ScanState,
  value: unknown,
  pointer: string,
  depth: number,
  key: string | undefined,
  label: PhiDetectorName | undefined,
): void {
  if (isFull(state) || depth > state.maxDepth) return;
  switch (typeof value) {
    case 'string':
      if (label !== undefined && (isLabelledValueHit(label, value) || isLabelledValueHit(label, normaliseText(value)))) add(state, label, pointer);
      scanText(state, value, pointer, key, depth);
      return;
    case 'number':
    case 'bigint':
      // A number is only PHI when its key says what it is; unlabelled counts, sizes and epochs are not.
      if (label !== undefined && isLabelledValueHit(label, value)) add(state, label, pointer);
      return;
    case 'object':
      break;
    default:
      return;
  }
  if (value === null || ArrayBuffer.isView(value) || value instanceof Date) return;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length && !isFull(state); i++) {
      // ["DOB", "1980-03-12"]: an item that is a label labels the text item after it.
      const previous = i > 0 && typeof value[i] === 'string' ? labelIn(value[i - 1]) : undefined;
      walk(state, value[i], `${pointer}/${i}`, depth + 1, key, previous ?? label);
    }
    return;
  }
  if (isFhirPatientDataResource(value)) add(state, 'fhir_resource', pointer);
  if (depth + 1 > state.maxDepth) return;
  const record = value as Record<string, unknown>;
  // {"field": "DOB", "value": "1980-03-12"}: a member whose value is a label labels its siblings.
  const labelMember = Object.keys(record).find((childKey) => labelIn(record[childKey]) !== undefined);
  const siblingLabel = labelMember === undefined ? undefined : labelIn(record[labelMember]);
  for (const childKey of Object.keys(record)) {
    if (isFull(state)) return;
    const childPointer = `${pointer}/${escapePointerToken(childKey)}`;
    // A key holding PHI is reported at its object: the key's own pointer would spell the PHI out.
    scanText(state, childKey, pointer, undefined);
    const ownLabel = labelledKeyDetector(normaliseText(childKey));
    // A sibling's label applies to text only: `{"field": "mrn", "max_length": 16}` describes a field.
    const borrowed = childKey === labelMember || typeof record[childKey] !== 'string' ? undefined : siblingLabel;
    walk(state, record[childKey], childPointer, depth + 1, childKey, ownLabel ?? borrowed);
  }
}

/**
 * Scans any JSON-like value (a parsed request body) for PHI, in document order. Strings go through
 * every detector; object keys are scanned as text too but reported at the pointer of the object that
 * holds them, since a pointer through the key would repeat the PHI. Numbers only count under a
 * labelling key (`ssn`, `nhs_number`, `mrn`, `patient_id`, `dob`…), and any object whose `resourceType`
 * is a patient-data FHIR type is reported at its own pointer.
 *
 * Bounded: containers deeper than `maxDepth` (default 64) are not descended into, so the HTTP layer
 * should refuse bodies nested deeper than that; scanning stops at `maxFindings` (default 20).
 * Returns `[]` when nothing was found. A finding never contains the matched value.
 */
export function scanForPhi(value: unknown, options?: PhiScanOptions): PhiFinding[] {
  const state = newState(options);
  walk(state, value, '', 0, undefined, undefined);
  return state.findings;
}

/**
 * Scans parsed query parameters, reporting pointers `/query/<name>` and `/query/<name>/<index>` for
 * repeated parameters. Parameter names are scanned as text (a hit is reported at `/query`, so the
 * pointer never repeats it) and label their values, exactly like object keys in a body. Same bounds and defaults as {@link scanForPhi}.
 */
export function scanQueryForPhi(query: Record<string, unknown>, options?: PhiScanOptions): PhiFinding[] {
  const state = newState(options);
  // Not walked as an object: `?resourceType=Patient` is a search parameter, not a FHIR resource.
  for (const name of Object.keys(query)) {
    if (isFull(state) || state.maxDepth < 1) break;
    const pointer = `/query/${escapePointerToken(name)}`;
    scanText(state, name, '/query', undefined);
    walk(state, query[name], pointer, 1, name, labelledKeyDetector(name));
  }
  return state.findings;
}

/**
 * Scans one loose string (a header value, a path segment) and reports every hit at `pointer`
 * (default `""`, the root). At most one finding per detector.
 */
export function scanTextForPhi(text: string, pointer = ''): PhiFinding[] {
  const state = newState({ maxFindings: TEXT_DETECTORS.length });
  scanText(state, text, pointer, undefined);
  return state.findings;
}
