/**
 * PHI detectors. Each is a small predicate over one string; the walker in scan.ts decides where the
 * strings come from (values, keys, query parameters) and turns hits into findings. Detectors answer
 * only "is there PHI here", never "what": the matched text must not leave this module.
 *
 * Every pattern is precompiled, linear-time (bounded quantifiers, disjoint classes around each
 * repetition) and guarded by a cheap `includes`/digit check, because this runs on every request.
 */
import { findPatientContext } from './patient-context.ts';

/** Every detector name, in the order detectors run (and so the order of findings for one value). */
export const PHI_DETECTOR_NAMES = [
  'us_ssn',
  'uk_nhs_number',
  'mrn',
  'date_of_birth',
  'fhir_resource',
  'hl7v2_pid',
  'patient_name_condition',
  'patient_contact_condition',
] as const;

export type PhiDetectorName = (typeof PHI_DETECTOR_NAMES)[number];

/** Where a string sits, for detectors whose answer depends on it. */
export type PhiTextContext = { readonly key?: string | undefined };

export type PhiTextDetector = {
  readonly name: PhiDetectorName;
  test(text: string, context?: PhiTextContext): boolean;
};

const HAS_DIGIT = /\d/;
// Labels start after a non-alphanumeric so that `patient_ssn` and `x-mrn` count but `adobe` does not.
const LABEL_START = '(?<![A-Za-z0-9])';
// What may sit between a label and its value: punctuation, quotes, and an optional "is"/"was".
const LABEL_GAP = `[\\s:#=_.,'"-]{0,6}(?:(?:is|was)\\s{1,3})?`;

/** Runs a global regex over `text` and reports whether any match passes `accept`. */
function anyMatch(re: RegExp, text: string, accept: (m: RegExpExecArray) => boolean): boolean {
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    if (accept(m)) {
      re.lastIndex = 0;
      return true;
    }
  }
  return false;
}

// --- US Social Security number -------------------------------------------------------------------

// The 3-2-4 split with one consistent separator (space, hyphen or dot) is what makes bare digits an
// SSN; it is not the shape of phones (3-3-4), dates (4-2-2) or UUID groups (8-4-4-4-12), and never
// sits inside a longer token or a dotted version number.
const SSN_SEPARATED = /(?<![\w.-])(\d{3})([ .-])(\d{2})\2(\d{4})(?![\w-]|\.\d)/g;
const SSN_LABELLED = new RegExp(
  `${LABEL_START}(?:ssn|social[\\s_-]{0,2}security(?:[\\s_-]{0,2}(?:number|num|no))?)${LABEL_GAP}` +
    '(\\d{3})([ -]?)(\\d{2})\\2(\\d{4})(?!\\d)',
  'gi',
);

/** SSA rules: area 000, 666 and 900–999 (ITINs, advertising) are never issued; nor group 00 or serial 0000. */
function isIssuableSsn(area: string, group: string, serial: string): boolean {
  return area !== '000' && area !== '666' && !area.startsWith('9') && group !== '00' && serial !== '0000';
}

const ssnAccept = (m: RegExpExecArray): boolean => isIssuableSsn(m[1] ?? '', m[3] ?? '', m[4] ?? '');

/** US SSN: `123-45-6789` / `123 45 6789` anywhere, or nine bare digits right after an SSN label. */
export const usSsn: PhiTextDetector = {
  name: 'us_ssn',
  test(text) {
    if (text.length < 9 || !HAS_DIGIT.test(text)) return false;
    return anyMatch(SSN_SEPARATED, text, ssnAccept) || anyMatch(SSN_LABELLED, text, ssnAccept);
  },
};

// --- UK NHS number -------------------------------------------------------------------------------

/**
 * The NHS number mod-11 check: weights 10..2 over the first nine digits, check digit
 * `11 - (sum mod 11)`, where 11 means 0 and 10 means the number can never be issued.
 * `digits` must be exactly ten ASCII digits (separators stripped by the caller).
 */
export function isValidNhsNumber(digits: string): boolean {
  if (!/^\d{10}$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < 9; i++) sum += (digits.charCodeAt(i) - 48) * (10 - i);
  const check = 11 - (sum % 11);
  if (check === 10) return false;
  return (check === 11 ? 0 : check) === digits.charCodeAt(9) - 48;
}

// Every repdigit passes mod-11 (54·d ≡ −d), as does 0123456789; these are placeholders, not patients.
const NHS_PLACEHOLDER = /^(?:(\d)\1{9}|0123456789)$/;

// Not inside a longer token (ULIDs, hex, 13-digit ms timestamps, UUID groups) or a decimal (0.9434765919).
const NHS_UNLABELLED = /(?<![\w-]|\d[.,])(\d{3})([ -]?)(\d{3})\2(\d{4})(?![\w-]|[.,]\d)/g;
const NHS_LABELLED = new RegExp(
  `${LABEL_START}nhs(?:[\\s_-]{0,2}(?:number|num|no))?${LABEL_GAP}(\\d{3})[\\s.-]?(\\d{3})[\\s.-]?(\\d{4})(?!\\d)`,
  'gi',
);
// A 3-3-4 run is also a North American or UK national phone number; a dial prefix or a phone word
// just before it, or a phone-ish key, means it is one.
const DIAL_PREFIX = /(?:\+\d{1,3}[\s.-]?|\(\s?)$/;
const PHONE_WORD =
  /(?<![A-Za-z])(?:tel|phones?|telephone|ph|call|fax|mobile|cell|sms|whatsapp|helpline|hotline|freephone|toll[\s-]?free)(?![A-Za-z])/i;
const PHONE_KEY = /phone|fax|mobile|msisdn|helpline|hotline|(?:^|[^a-z])tel(?:[^a-z]|$)/;
const CAMEL_HUMP = /([a-z])([A-Z])/g;

function nhsDigits(m: RegExpExecArray, a: number, b: number, c: number): string {
  return `${m[a] ?? ''}${m[b] ?? ''}${m[c] ?? ''}`;
}

function isIssuableNhs(digits: string): boolean {
  return isValidNhsNumber(digits) && !NHS_PLACEHOLDER.test(digits);
}

/** UK NHS number: ten digits (bare, 3-3-4 spaced or dashed) passing mod-11; any such run after an NHS label. */
export const ukNhsNumber: PhiTextDetector = {
  name: 'uk_nhs_number',
  test(text, context) {
    if (text.length < 10 || !HAS_DIGIT.test(text)) return false;
    if (anyMatch(NHS_LABELLED, text, (m) => isIssuableNhs(nhsDigits(m, 1, 2, 3)))) return true;
    const key = context?.key;
    if (key !== undefined && PHONE_KEY.test(key.replace(CAMEL_HUMP, '$1_$2').toLowerCase())) return false;
    return anyMatch(NHS_UNLABELLED, text, (m) => {
      if (!isIssuableNhs(nhsDigits(m, 1, 3, 4))) return false;
      const before = text.slice(Math.max(0, m.index - 24), m.index);
      return !DIAL_PREFIX.test(before) && !PHONE_WORD.test(before);
    });
  },
};

// --- Medical record number -----------------------------------------------------------------------

const NUMBER_WORD = '(?:number|num|no|#)';
// The identifier is either spaced digit groups ("12 345 678") or one token ("A-0045821", "PT/99812");
// a gap is needed unless the identifier starts with a digit ("MRN12345"), so "MRNs" stays prose.
const MRN_LABELLED = new RegExp(
  `${LABEL_START}(?:mrn|medical[\\s_-]{0,2}record[\\s_-]{0,2}${NUMBER_WORD}|patient[\\s_-]{0,2}(?:id|identifier|${NUMBER_WORD})` +
    `|hosp(?:ital)?\\.?[\\s_-]{0,2}(?:reg(?:istration)?\\.?[\\s_-]{0,2})?(?:${NUMBER_WORD}|id|ref(?:erence)?)\\.?|case[\\s_-]{0,2}(?:notes?[\\s_-]{0,2})?${NUMBER_WORD}|casenotes?[\\s_-]{0,2}${NUMBER_WORD}|pas[\\s_-]{0,2}(?:${NUMBER_WORD}|id)|med(?:ical)?\\.?[\\s_-]{0,2}rec(?:ord)?\\.?[\\s_-]{0,2}${NUMBER_WORD}\\.?` +
    `|(?:chart|unit)[\\s_-]{0,2}${NUMBER_WORD}|chi(?:[\\s_-]{0,2}${NUMBER_WORD})?|medicare(?:[\\s_-]{0,2}card)?(?:[\\s_-]{0,2}${NUMBER_WORD})?` +
    `|(?:insurance|subscriber|member|policy[\\s_-]{0,2}holder)[\\s_-]{0,2}(?:member[\\s_-]{0,2})?(?:id|${NUMBER_WORD}))` +
    `(?:[\\s:#=.'"-]{1,6}(?:(?:is|was)\\s{1,3})?|(?=\\d))([A-Za-z]{1,4}[ -]?\\d{1,10}(?:[ -]\\d{1,10}){1,4}(?![\\w-])|\\d{1,10}(?: \\d{1,10}){0,4}|[A-Za-z0-9][\\w/.-]{0,39})`,
  'gi',
);
const DIGIT_G = /\d/g;

/** MRN: a record-number label followed by an identifier holding at least four digits. */
export const mrn: PhiTextDetector = {
  name: 'mrn',
  test(text) {
    if (text.length < 7 || !HAS_DIGIT.test(text)) return false;
    return anyMatch(MRN_LABELLED, text, (m) => (m[1]?.match(DIGIT_G)?.length ?? 0) >= 4);
  },
};

// --- Date of birth -------------------------------------------------------------------------------

const MONTH =
  '(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)';
const DAY = '(?:0?[1-9]|[12]\\d|3[01])';
const MON = '(?:0?[1-9]|1[0-2])';
const ORD = '(?:st|nd|rd|th)?';
/** The common written forms of a calendar date; `(?!\d)` keeps it off longer digit runs. */
const DATE =
  `(?:\\d{4}[-/.]${MON}[-/.]${DAY}|${DAY}[-/.]${DAY}[-/.](?:\\d{4}|\\d{2})|(?:1[89]|20)\\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\\d|3[01])` +
  `|${DAY}${ORD}[\\s-]{1,3}${MONTH}\\.?,?[\\s-]{1,3}\\d{4}|${MONTH}\\.?[\\s-]{1,3}${DAY}${ORD},?\\s{1,3}\\d{4})(?!\\d)`;
// Birth labels in English and in the languages of Ward's neighbours (Spanish, French, German,
// Italian, Dutch, Portuguese, Nordic, Welsh): accents are optional, the guard reads NFKC text.
const DOB_LABELS_ELSEWHERE =
  'fecha[\\s_-]{1,2}de[\\s_-]{1,2}nacimiento|f\\.?[\\s_-]?nac\\.?|date[\\s_-]{1,2}de[\\s_-]{1,2}naissance|n[ée]e?[\\s_-]{1,2}le|geburtsdatum|geb\\.|geboren[\\s_-]{1,2}am' +
  '|data[\\s_-]{1,2}di[\\s_-]{1,2}nascita|nato[\\s_-]{1,2}il|nata[\\s_-]{1,2}il|geboortedatum|geboren[\\s_-]{1,2}op|data[\\s_-]{1,2}de[\\s_-]{1,2}nascimento' +
  '|f[öo]delsedatum|f[øo]dselsdato|syntym[äa]aika|dyddiad[\\s_-]{1,2}geni';
const DOB_LABELLED = new RegExp(
  `${LABEL_START}(?:d\\.?o\\.?b(?![A-Za-z])|date[\\s_-]{0,2}of[\\s_-]{0,2}birth|birth[\\s_-]{0,2}date|born(?:[\\s_-]{1,2}on)?|${DOB_LABELS_ELSEWHERE})` +
    `${LABEL_GAP}${DATE}`,
  'i',
);
// FHIR search prefixes (`?birthdate=ge1980-01-01`) may precede the date.
const DATE_VALUE = new RegExp(`^\\s*(?:eq|ne|gt|lt|ge|le|sa|eb|ap)?(?:${DATE}|\\d{4}-${MON}(?![\\d-]))`, 'i');

/** Whether a whole value reads as a (possibly partial, year-month) date: the test for birth-date keys. */
export function isDateValue(text: string): boolean {
  return text.length >= 6 && text.length <= 64 && DATE_VALUE.test(text);
}

/** Date of birth: a birth label (DOB, D.O.B., date of birth, birth date, born on) followed by a date. */
export const dateOfBirth: PhiTextDetector = {
  name: 'date_of_birth',
  test(text) {
    if (text.length < 9 || !HAS_DIGIT.test(text)) return false;
    return DOB_LABELLED.test(text);
  },
};

// --- FHIR patient-data resources -----------------------------------------------------------------

/**
 * FHIR resource types whose instances are about a patient. Definitional and administrative types
 * (CapabilityStatement, Organization, Practitioner, Endpoint, ValueSet…) are deliberately absent: agent
 * records legitimately describe them. A Bundle is caught through the patient resources inside it.
 */
export const FHIR_PATIENT_DATA_RESOURCE_TYPES: ReadonlySet<string> = new Set([
  'Patient', 'Observation', 'Condition', 'Encounter', 'EpisodeOfCare', 'MedicationRequest',
  'MedicationStatement', 'MedicationAdministration', 'MedicationDispense', 'AllergyIntolerance',
  'Procedure', 'DiagnosticReport', 'ImagingStudy', 'Immunization', 'CarePlan', 'CareTeam', 'Goal',
  'DocumentReference', 'Composition', 'Specimen', 'ServiceRequest', 'FamilyMemberHistory',
  'QuestionnaireResponse', 'RiskAssessment', 'ClinicalImpression', 'Claim', 'ClaimResponse',
  'ExplanationOfBenefit', 'Coverage', 'RelatedPerson', 'Person', 'AdverseEvent', 'NutritionOrder',
  'DeviceRequest', 'Appointment', 'Flag',
]); // prettier-ignore

/** Whether `value` is itself a FHIR resource of a patient-data type (`resourceType` is case-sensitive). */
export function isFhirPatientDataResource(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const type = (value as { resourceType?: unknown }).resourceType;
  return typeof type === 'string' && FHIR_PATIENT_DATA_RESOURCE_TYPES.has(type);
}

/** Whether a patient-data FHIR resource sits anywhere in `value`, looking at most `maxDepth` levels down. */
export function containsFhirPatientData(value: unknown, maxDepth = 64): boolean {
  // Iterative, so a hostile nesting depth cannot blow the stack.
  const stack: Array<[unknown, number]> = [[value, 0]];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [node, depth] = item;
    if (typeof node !== 'object' || node === null || depth > maxDepth) continue;
    if (isFhirPatientDataResource(node)) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push([child, depth + 1]);
  }
  return false;
}

const FHIR_XML = new RegExp(
  `<(?:${[...FHIR_PATIENT_DATA_RESOURCE_TYPES].join('|')})\\s[^>]{0,512}?xmlns\\s*=\\s*["']http://hl7\\.org/fhir["']`,
);

/** FHIR resource serialised inside a string: JSON (only parsed when it could be one) or FHIR XML. */
export const fhirResource: PhiTextDetector = {
  name: 'fhir_resource',
  test(text) {
    if (text.length < 20) return false;
    if (text.includes('"resourceType"')) {
      const first = text.trimStart()[0];
      if (first === '{' || first === '[') {
        try {
          if (containsFhirPatientData(JSON.parse(text))) return true;
        } catch {
          // Not JSON after all: the other detectors still see the raw text.
        }
      }
    }
    return text.includes('hl7.org/fhir') && FHIR_XML.test(text);
  },
};

// --- HL7v2 PID segment ---------------------------------------------------------------------------

// A segment starts the string or follows a segment separator (real CR/LF, or a still-escaped "\r").
const SEGMENT_START = '(?:^|[\\r\\n]|\\\\[rn])[ \\t]{0,4}';
// PID-1 and PID-2 then something in PID-3 (the patient identifier list). Each field is bounded and
// cannot contain the pipe that ends it, so matching is linear.
const PID_FIELDS = '(?:[^|\\r\\n]{0,256}\\|){2}[^|\\s]';
// Segments about a person: the patient (PID), next of kin (NK1), diagnoses (DG1), guarantor (GT1),
// insurance (IN1). Found as `hl7v2_pid`, the detector's name from when it knew PID alone.
const PERSON_SEGMENTS = '(?:PID|NK1|DG1|GT1|IN1)';
const PID_SEGMENT = new RegExp(`${SEGMENT_START}${PERSON_SEGMENTS}\\|${PID_FIELDS}`);
const MSH_SEGMENT = new RegExp(`${SEGMENT_START}MSH\\|`);
const PID_ANYWHERE = new RegExp(`(?<![A-Za-z0-9])${PERSON_SEGMENTS}\\|${PID_FIELDS}`);
const SEGMENT_MARKER = /(?:PID|NK1|DG1|GT1|IN1)\|/;

/** HL7v2 person segments: a segment-initial `PID|` (or NK1, DG1, GT1, IN1) with its third field filled in, or one anywhere in an MSH message. */
export const hl7v2Pid: PhiTextDetector = {
  name: 'hl7v2_pid',
  test(text) {
    if (!SEGMENT_MARKER.test(text)) return false;
    return PID_SEGMENT.test(text) || (MSH_SEGMENT.test(text) && PID_ANYWHERE.test(text));
  },
};

// --- A person beside a health condition (the rules and their reasons: patient-context.ts) ----------

/** A patient's name with a condition: "Patient John Smith, diagnosed with type 2 diabetes". */
export const patientNameCondition: PhiTextDetector = {
  name: 'patient_name_condition',
  test: (text) => findPatientContext(text).nameWithCondition,
};

/** A person's contact detail beside their name and a condition: "Mary Jones, mary.jones@gmail.com, re her HIV results". */
export const patientContactCondition: PhiTextDetector = {
  name: 'patient_contact_condition',
  test: (text) => findPatientContext(text).contactWithCondition,
};

/** All string detectors, in `PHI_DETECTOR_NAMES` order. */
export const TEXT_DETECTORS: readonly PhiTextDetector[] = [
  usSsn,
  ukNhsNumber,
  mrn,
  dateOfBirth,
  fhirResource,
  hl7v2Pid,
  patientNameCondition,
  patientContactCondition,
];

// --- Labelled keys -------------------------------------------------------------------------------

// Keys compared with case, `_`, `-`, spaces etc. removed: `nhs_number`, `NHSNumber`, `nhs-no` all match.
const LABELLED_KEYS: ReadonlyMap<string, PhiDetectorName> = new Map<string, PhiDetectorName>([
  ...['ssn', 'ssnnumber', 'ssnno', 'socialsecurity', 'socialsecuritynumber', 'socialsecurityno', 'patientssn'].map(
    (k) => [k, 'us_ssn'] as const,
  ),
  ...['nhsnumber', 'nhsno', 'nhsnum', 'patientnhsnumber'].map((k) => [k, 'uk_nhs_number'] as const),
  ...[
    'mrn',
    'medicalrecordnumber',
    'medicalrecordno',
    'patientid',
    'patientnumber',
    'patientmrn',
    'hospitalnumber',
    'hospitalno',
    'hospitalnum',
    'hospitalid',
    'hospitalref',
    'hospno',
    'hospnumber',
    'hospnum',
    'hospid',
    'hospitalregistrationnumber',
    'pasnumber',
    'pasno',
    'pasid',
    'casenotenumber',
    'casenoteno',
    'casenotesnumber',
    'chinumber',
    'chi',
    'medicarenumber',
    'medicareno',
    'insurancememberid',
    'memberid',
    'subscriberid',
  ].map((k) => [k, 'mrn'] as const),
  ...['dob', 'dateofbirth', 'birthdate', 'birthday', 'born', 'bornon', 'patientdob', 'patientbirthdate', 'fechadenacimiento', 'datedenaissance', 'geburtsdatum', 'datadinascita', 'geboortedatum'].map(
    (k) => [k, 'date_of_birth'] as const,
  ),
]);
const KEY_NOISE = /[^a-z0-9]/g;

/** The detector a key names as a whole (`nhs_number`, `DOB`), without reading its last words. */
export function exactLabel(key: string): PhiDetectorName | undefined {
  return key.length > 40 ? undefined : LABELLED_KEYS.get(key.toLowerCase().replace(KEY_NOISE, ''));
}

const KEY_TOKEN_SPLIT = /[^a-z0-9]+/;
// Every labelled key ends with one of these words: a key holding none is not split into words at all.
const MAY_END_IN_LABEL = /(?:ssn|security|nhs|no|num|number|mrn|id|identifier|dob|birth|date|born|on|birthday|chi|ref)$/i;

/**
 * The detector an object key or query parameter name stands for (`ssn`, `nhs_number`, `dob`…), if
 * any: the whole key, or its last words (`member_ssn`, `subjectNhsNumber`, `guarantor-dob`), split at
 * word boundaries so that no label is found inside a word. A key that only begins with a label
 * (`patient_id_length`, `dob_format`) describes something else.
 */
export function labelledKeyDetector(key: string): PhiDetectorName | undefined {
  if (key.length > 40) return undefined;
  const whole = LABELLED_KEYS.get(key.toLowerCase().replace(KEY_NOISE, ''));
  if (whole !== undefined || !MAY_END_IN_LABEL.test(key)) return whole;
  const words = key.replace(CAMEL_HUMP, '$1 $2').toLowerCase().split(KEY_TOKEN_SPLIT).filter(Boolean);
  for (let first = 1; first < words.length; first += 1) {
    const label = LABELLED_KEYS.get(words.slice(first).join(''));
    if (label !== undefined) return label;
  }
  return undefined;
}

/**
 * Whether a scalar under a labelled key is PHI: any number; a string with at least four digits (so
 * flags and format hints like `"r4"` or `"hl7v2"` pass, while an SSN's last four still counts); for
 * birth-date keys, a date.
 */
export function isLabelledValueHit(detector: PhiDetectorName, value: string | number | bigint): boolean {
  if (detector === 'date_of_birth') return typeof value === 'string' && isDateValue(value);
  return typeof value !== 'string' || (value.match(DIGIT_G)?.length ?? 0) >= 4;
}
