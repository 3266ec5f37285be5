/**
 * Identifiers that arrive in pieces or out of their usual form (issue 28, item 4): as a JSON number,
 * split over consecutive array items, or as a segment of a URL path after a segment that names it.
 * The text detectors read prose; these give them, or a shape check, the same identifier whole.
 *
 * - A number under a label it borrows (a sibling `{"type": "ssn", "value": 123456789}`, an array's
 *   `["NHS", 9434765919]`) counts only when it has that identifier's shape: nine issuable digits for an
 *   SSN, a mod-11 NHS number, five or more digits for a record number, an eight-digit birth date.
 *   A number under no label counts only as an NHS number (ten digits, mod-11, not a placeholder, under
 *   no key that says it is a time, a size or a count), as the same digits in a string would.
 * - A run of short scalar items of one array is read again as one text, joined by spaces: `["943",
 *   "476", "5919"]` reads as `943 476 5919`, which the NHS detector knows.
 * - A URL path is read as label/value pairs: `…/patients/mrn/00482913`, `…/Patient/00482913`,
 *   `…/nhs-number/9434765919`, and a query `?patient=00482913` the same.
 */
import { dateOfBirth, isDateValue, isValidNhsNumber, labelledKeyDetector, mrn, ukNhsNumber, usSsn, type PhiDetectorName, type PhiTextDetector } from './detectors.ts';

/** The detectors of identifiers: what a joined array run or a path is read with. */
const IDENTIFIER_DETECTORS: readonly PhiTextDetector[] = [usSsn, ukNhsNumber, mrn, dateOfBirth];

const PLACEHOLDER_NHS = /^(?:(\d)\1{9}|0123456789)$/;

/** Whether `digits` (ASCII digits only) have the shape of the identifier `label` names. */
export function hasIdentifierShape(label: PhiDetectorName, digits: string): boolean {
  switch (label) {
    case 'us_ssn':
      return /^\d{9}$/.test(digits) && !/^(?:000|666|9)/.test(digits) && digits.slice(3, 5) !== '00' && digits.slice(5) !== '0000';
    case 'uk_nhs_number':
      return isValidNhsNumber(digits) && !PLACEHOLDER_NHS.test(digits);
    case 'mrn':
      return /^\d{5,12}$/.test(digits);
    case 'date_of_birth':
      return /^(?:19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])$/.test(digits);
    default:
      return false;
  }
}

// Keys whose numbers are times, sizes, counts or positions: ten digits there are an epoch, not a patient.
const MEASURE_TOKEN = /^(?:at|time|ts|timestamp|epoch|exp|iat|nbf|date|seconds?|secs?|ms|millis|size|bytes|count|total|len|length|limit|max|min|port|seq|offset|cursor|version|ttl|rps|weight|priority)$/;

function keyTokens(key: string): string[] {
  return key
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/**
 * What a JSON number is, if an identifier: under a borrowed label, that label when the number has its
 * shape; under none, an NHS number when it is one and its key does not make it a measure.
 */
export function numberIdentifier(value: number | bigint, key: string | undefined, borrowed: PhiDetectorName | undefined): PhiDetectorName | undefined {
  if (typeof value === 'number' && (!Number.isInteger(value) || value < 0)) return undefined;
  const digits = value.toString();
  if (borrowed !== undefined) return hasIdentifierShape(borrowed, digits) ? borrowed : undefined;
  if (digits.length !== 10 || !hasIdentifierShape('uk_nhs_number', digits)) return undefined;
  if (key !== undefined && keyTokens(key).some((token) => MEASURE_TOKEN.test(token))) return undefined;
  return 'uk_nhs_number';
}

/** Items short enough to be a piece of an identifier; longer ones end a run. */
const MAX_PIECE_CHARS = 24;
const MAX_RUN_CHARS = 200;

/**
 * The runs of consecutive short scalars (strings and integers) of an array, each joined by spaces,
 * for the identifier detectors: only runs of two or more items, and only when some item has a digit.
 */
export function arrayRuns(items: readonly unknown[]): string[] {
  const runs: string[] = [];
  let run = '';
  let pieces = 0;
  let digits = false;
  let joinNext = false;
  const close = () => {
    if (pieces >= 2 && digits) runs.push(run.slice(0, MAX_RUN_CHARS));
    run = '';
    pieces = 0;
    digits = false;
    joinNext = false;
  };
  for (const item of items) {
    const piece = typeof item === 'string' ? item.trim() : typeof item === 'number' && Number.isInteger(item) && item >= 0 ? String(item) : undefined;
    if (piece === undefined || piece.length === 0 || piece.length > MAX_PIECE_CHARS) {
      close();
      continue;
    }
    // A separator item ("-", ".", "/") joins its neighbours as it would in the written identifier.
    const separator = SEPARATOR_PIECE.test(piece);
    run += run === '' || separator || joinNext ? piece : ` ${piece}`;
    joinNext = separator;
    pieces += 1;
    digits ||= /\d/.test(piece);
  }
  close();
  return runs;
}

const SEPARATOR_PIECE = /^[-./]$/;

/** The identifier detectors that fire on `text` (a joined run, or a path read as words). */
export function identifierHits(text: string, key: string | undefined): PhiDetectorName[] {
  return IDENTIFIER_DETECTORS.filter((detector) => detector.test(text, { key })).map((detector) => detector.name);
}

// Path segments that name a patient record: the value after them is that record's identifier.
const PATIENT_SEGMENT = /^(?:patients?|pt)$/i;
// A path without one of these words names no identifier: most URLs stop here.
const NAMES_AN_IDENTIFIER = /patient|pt[/?&=#;]|mrn|nhs|ssn|social|dob|birth|born|hosp|medical|record|chi|medicare|member|subscriber|insurance|case/i;
const URL_LIKE = /^(?:[a-z][a-z0-9+.-]{1,15}:\/\/[^/?#\s]*|\/)/i;

/**
 * Identifiers a URL carries in its path or query: a segment that names an identifier (`mrn`,
 * `nhs-number`, `ssn`, `dob`, `patient`…) followed by a segment or parameter value of that
 * identifier's kind. Only for strings that are a URL or a path.
 */
export function urlPathHits(text: string): PhiDetectorName[] {
  if (text.length > 2048 || !text.includes('/') || !URL_LIKE.test(text) || !NAMES_AN_IDENTIFIER.test(text)) return [];
  const rest = text.replace(/^[a-z][a-z0-9+.-]{1,15}:\/\/[^/?#\s]*/i, '');
  const segments = rest.split(/[/?&=#;]+/).map(decodeSegment).filter(Boolean);
  const hits = new Set<PhiDetectorName>();
  for (let i = 0; i + 1 < segments.length; i += 1) {
    const name = segments[i] ?? '';
    const label = labelledKeyDetector(name) ?? (PATIENT_SEGMENT.test(name) ? 'mrn' : undefined);
    if (label === undefined) continue;
    const value = segments[i + 1] ?? '';
    if (label === 'date_of_birth' ? isDateValue(value) : pathValueHit(label, value)) hits.add(label);
  }
  return [...hits];
}

function pathValueHit(label: PhiDetectorName, value: string): boolean {
  const digits = value.replace(/[\s.-]/g, '');
  if (label === 'mrn') return (value.match(/\d/g)?.length ?? 0) >= 4 && /^[A-Za-z0-9._:-]{4,40}$/.test(value);
  return /^\d+$/.test(digits) && hasIdentifierShape(label, digits);
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
