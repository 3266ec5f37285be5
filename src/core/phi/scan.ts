/**
 * The PHI scan: walks a request body or query (anything JSON-like) and reports which detectors hit and
 * where, as RFC 6901 JSON pointers. Findings never carry the matched value, so they are safe to return
 * in a 422 PHI_DETECTED envelope and to log.
 */
import {
  TEXT_DETECTORS,
  containsFhirPatientData,
  exactLabel,
  isFhirPatientDataResource,
  isLabelledValueHit,
  labelledKeyDetector,
  type PhiDetectorName,
} from './detectors.ts';
import { arrayRuns, identifierHits, numberIdentifier, urlPathHits } from './identifier-shapes.ts';
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
/** How deep, past the scan's own bound, a body is swept for a patient's FHIR resource (iteratively). */
const DEEP_SWEEP_DEPTH = 10_000;
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
  // A URL's path and query read as label/value pairs (`…/patients/mrn/00482913`).
  for (const detector of urlPathHits(text)) add(state, detector, pointer);
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

// A short value that ends with a birth label ("Jane Doe, DOB", "born on") labels the dates beside it.
const TRAILING_BIRTH_LABEL = /(?:^|[\s,;(])(?:d\.?o\.?b\.?|date of birth|birth ?date|born(?: on)?)\s*[:#=-]?\s*$/i;

/**
 * The detector a short string names when it is itself a label ("DOB", "NHS number"), if any, or when
 * it ends with a birth label ("Jane Doe, born on"): a name, a label and a date may come in three
 * fields.
 */
function labelIn(value: unknown): PhiDetectorName | undefined {
  if (typeof value !== 'string' || value.length > 80) return undefined;
  const text = normaliseText(value);
  if (text.length <= 40) {
    const label = exactLabel(text) ?? (TRAILING_BIRTH_LABEL.test(text) ? 'date_of_birth' : undefined);
    if (label !== undefined) return label;
  }
  // A caption or a question that ends in a label: "Hospital number:", "What is your hospital number?".
  const caption = CAPTION.exec(text);
  return caption ? labelledKeyDetector(caption[1] as string) : undefined;
}

const CAPTION = /^([A-Za-z][A-Za-z .'_-]{0,76}?)\s{0,3}[?:]\s{0,3}$/;

/**
 * The label an array item gives the item after it: a label string, or a small object holding one
 * (`[{"label": "Hospital number"}, {"value": "H1234567"}]`: a label and its value split over items).
 */
function itemLabel(value: unknown): PhiDetectorName | undefined {
  if (typeof value === 'string') return labelIn(value);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  // Only an object that is a caption: at most three members, the label under a caption's key.
  const members = Object.entries(value);
  if (members.length > 3) return undefined;
  for (const [key, member] of members) {
    const label = CAPTION_KEYS.has(key.toLowerCase()) ? labelIn(member) : undefined;
    if (label !== undefined) return label;
  }
  return undefined;
}

const CAPTION_KEYS = new Set(['label', 'name', 'field', 'key', 'title', 'heading', 'caption', 'question', 'prompt', 'k']);

/** An identifier's `system` URL that names what the identifier is (`…/Id/local-hospital-number`, `…/nhs-number`). */
function systemLabel(record: Record<string, unknown>): PhiDetectorName | undefined {
  const system = record.system;
  if (typeof system !== 'string' || system.length > 200) return undefined;
  const last = /[/:#]([A-Za-z][\w.-]{2,40})\/?$/.exec(system);
  return last ? labelledKeyDetector(last[1] as string) : undefined;
}

const isPlainObject = (value: unknown): boolean => typeof value === 'object' && value !== null && !Array.isArray(value);

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
  if (isFull(state)) return;
  if (depth > state.maxDepth) {
    // Below the bound nothing is read, but a patient's FHIR resource is still found (iteratively).
    if (typeof value === 'object' && containsFhirPatientData(value, DEEP_SWEEP_DEPTH)) add(state, 'fhir_resource', pointer);
    return;
  }
  switch (typeof value) {
    case 'string':
      if (label !== undefined && (isLabelledValueHit(label, value) || isLabelledValueHit(label, normaliseText(value)))) add(state, label, pointer);
      scanText(state, value, pointer, key, depth);
      return;
    case 'number':
    case 'bigint': {
      // A number under its own label is PHI; otherwise only when it has an identifier's shape
      // (identifier-shapes.ts): counts, sizes and epochs are not.
      if (label !== undefined) {
        if (isLabelledValueHit(label, value)) add(state, label, pointer);
        return;
      }
      const found = numberIdentifier(value, key, undefined);
      if (found !== undefined) add(state, found, pointer);
      return;
    }
    case 'object':
      break;
    default:
      return;
  }
  if (value === null || ArrayBuffer.isView(value) || value instanceof Date) return;
  if (Array.isArray(value)) {
    const before = state.findings.length;
    for (let i = 0; i < value.length && !isFull(state); i++) {
      // ["DOB", "1980-03-12"]: an item that is a label labels the text item after it, and a number
      // after it when the number has that identifier's shape (["SSN", 123456789]).
      const previous = i > 0 ? itemLabel(value[i - 1]) : undefined;
      const item: unknown = value[i];
      if (previous !== undefined && (typeof item === 'number' || typeof item === 'bigint')) {
        const found = numberIdentifier(item, key, previous);
        if (found !== undefined) add(state, found, `${pointer}/${i}`);
      }
      walk(state, item, `${pointer}/${i}`, depth + 1, key, (typeof item === 'string' || isPlainObject(item) ? previous : undefined) ?? label);
    }
    // An identifier split over items (["943", "476", "5919"]) is read whole, at the array.
    if (state.findings.length === before) {
      for (const run of arrayRuns(value)) for (const detector of identifierHits(run, key)) add(state, detector, pointer);
    }
    return;
  }
  if (isFhirPatientDataResource(value)) add(state, 'fhir_resource', pointer);
  const record = value as Record<string, unknown>;
  // {"field": "DOB", "value": "1980-03-12"}: a member whose value is a label labels its siblings.
  const labelMember = Object.keys(record).find((childKey) => labelIn(record[childKey]) !== undefined);
  // …or a label handed down: the item before this one, or the member above it (`{"label": "MRN", "value": {"text": …}}`),
  // or the identifier system this object names.
  // A member that is a small object holding a label (`{"a": {"label": "MRN"}, "b": {"value": …}}`) labels the others too.
  const holder = labelMember === undefined ? Object.keys(record).find((childKey) => isPlainObject(record[childKey]) && itemLabel(record[childKey]) !== undefined) : undefined;
  const localLabel = (labelMember === undefined ? undefined : labelIn(record[labelMember])) ?? systemLabel(record) ?? (holder === undefined ? undefined : itemLabel(record[holder]));
  // A label handed down from above labels this object's own text only, never deeper objects.
  const siblingLabel = localLabel ?? label;
  for (const childKey of Object.keys(record)) {
    if (isFull(state)) return;
    const childPointer = `${pointer}/${escapePointerToken(childKey)}`;
    // A key holding PHI is reported at its object: the key's own pointer would spell the PHI out.
    scanText(state, childKey, pointer, undefined);
    const ownLabel = labelledKeyDetector(normaliseText(childKey));
    // A sibling's label applies to text, and to a number only when it has that identifier's shape:
    // `{"field": "mrn", "max_length": 16}` describes a field, `{"type": "ssn", "value": 123456789}` is one.
    const child: unknown = record[childKey];
    const borrowed = childKey === labelMember || childKey === holder || childKey === 'system' ? undefined : siblingLabel;
    if (ownLabel === undefined && borrowed !== undefined && (typeof child === 'number' || typeof child === 'bigint')) {
      const found = numberIdentifier(child, childKey, borrowed);
      if (found !== undefined) add(state, found, childPointer);
    }
    const handed = typeof child === 'string' ? borrowed : isPlainObject(child) && childKey !== labelMember ? localLabel : undefined;
    walk(state, child, childPointer, depth + 1, childKey, ownLabel ?? handed);
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
