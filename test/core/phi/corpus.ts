/**
 * The PHI corpus (contract: "keep a corpus of both kinds in the tests"). BLOCKED samples must be found
 * with their detector at their pointer; ORDINARY samples are realistic registry traffic that must pass.
 * When a false positive or a miss turns up in the wild, add it here first.
 */
import type { PhiDetectorName } from '../../../src/core/phi/index.ts';
import { PATIENT_CONTEXT_BLOCKED, PATIENT_CONTEXT_ORDINARY } from './corpus-patient-context.ts';
import { shapeSamples } from './corpus-shapes.ts';
import type { BlockedSample, OrdinarySample } from './sample.ts';

export type { BlockedSample, OrdinarySample } from './sample.ts';

/**
 * The NHS mod-11 check digit for the first nine digits, or `undefined` when it would be 10 (never
 * issued). Written independently of src/ so the corpus does not trust the code it tests.
 */
export function nhsCheckDigit(first9: string): number | undefined {
  const sum = [...first9].reduce((acc, digit, i) => acc + Number(digit) * (10 - i), 0);
  const check = 11 - (sum % 11);
  return check === 10 ? undefined : check % 11;
}

/** Whether a 10-digit string passes mod-11, by the corpus's own arithmetic. */
export function passesMod11(digits: string): boolean {
  return /^\d{10}$/.test(digits) && nhsCheckDigit(digits.slice(0, 9)) === Number(digits[9]);
}

function withCheckDigit(first9: string): string {
  const check = nhsCheckDigit(first9);
  if (check === undefined) throw new Error(`${first9} has no valid NHS check digit`);
  return `${first9}${check}`;
}

const spaced = (nhs: string): string => `${nhs.slice(0, 3)} ${nhs.slice(3, 6)} ${nhs.slice(6)}`;

/** 943 476 5919 is the well-known NHS test number; the others are computed. */
export const VALID_NHS_NUMBERS: readonly string[] = [
  '9434765919',
  ...['401023213', '485777345', '612345678', '721003456', '450557710', '999000001'].map(withCheckDigit),
];
const [NHS_A = '', NHS_B = '', NHS_C = '', NHS_D = ''] = VALID_NHS_NUMBERS.slice(1);

/** Ten digits that fail mod-11: one wrong check digit each, and 1234567890 whose check would be 10. */
export const INVALID_NHS_NUMBERS: readonly string[] = [
  '9434765918',
  '4010232138',
  '4857773450',
  '6123456780',
  '1234567890',
];
const [BAD_A = '', BAD_B = '', , , BAD_E = ''] = INVALID_NHS_NUMBERS;

// North American numbers whose ten digits happen to pass mod-11: only their phone context saves them.
const PHONE_MOD11_A = '800 555 0103';
const PHONE_MOD11_B = '800-555-0111';
const PHONE_MOD11_C = '8005550146';

const CERT_PEM = `-----BEGIN CERTIFICATE-----
MIICCjCCAa+gAwIBAgIUOZeX5+Mlflp4wWsqHkeG2uzzvZIwCgYIKoZIzj0EAwIw
WjELMAkGA1UEBhMCR0IxJzAlBgNVBAoMHk5vcnRod2luZCBOSFMgRm91bmRhdGlv
biBUcnVzdDEiMCAGA1UEAwwZdHJpYWdlLmFnZW50cy5leGFtcGxlLm9yZzAeFw0y
NjExMjIxODQxNTZaFw0yOTAyMjQxODQxNTZaMFoxCzAJBgNVBAYTAkdCMScwJQYD
VQQKDB5Ob3J0aHdpbmQgTkhTIEZvdW5kYXRpb24gVHJ1c3QxIjAgBgNVBAMMGXRy
aWFnZS5hZ2VudHMuZXhhbXBsZS5vcmcwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNC
AASm4gdAy9l3ktbvE5MLTQVEEaTNR6uBvtBXdXVv0LR0B8AZff0SyM3v3l2YtgJo
XDGRTqXCuDPQe1KuNKdOZ/Dio1MwUTAdBgNVHQ4EFgQUlMx5ObXj6tju4lSmhvWg
C9ix9ZYwHwYDVR0jBBgwFoAUlMx5ObXj6tju4lSmhvWgC9ix9ZYwDwYDVR0TAQH/
BAUwAwEB/zAKBggqhkjOPQQDAgNJADBGAiEAts6+0+Eq4sQfVA5dIFcVkva/1dSL
WIF3hw88U1d0ZfoCIQCbWYi8tVa5DM5VVacuJYS645KyquXlAP2d8u5cbZbPOw==
-----END CERTIFICATE-----
`;
const JWS =
  'eyJhbGciOiJFUzI1NiIsImtpZCI6IjIwMjUtMDYtd2FyZC1zaWduaW5nIn0.eyJzdWIiOiJyZWdpc3RyeTovL2diL2FnZW50cy8wMUpCN1E0' +
  'UjZTOFQwVjJXNFg2WThaMEExQiIsImlhdCI6MTc2NzIyNTYwMCwiZGlzcGxheV9uYW1lIjoiTm9ydGh3aW5kIFRyaWFnZSBBZ2VudCJ9.TviJX' +
  'euxY5aR7wH7WLj0rHNTMHMVzPUg_pkiMEZPRIJBbYcOXiSKsclkvokZ5Uh96Swspr0ilLX_eEJnVEUNXw';
const JWK = {
  kty: 'EC',
  crv: 'P-256',
  kid: '2025-06-ward-signing',
  x: 'puIHQMvZd5LW7xOTC00FRBGkzUergb7QV3V1b9C0dAc',
  y: 'wBl9_RLIze_eXZi2AmhcMZFOpcK4M9B7Uq40p05n8OI',
};
const AGENT_ULID = '01JB7Q4R6S8T0V2W4X6Y8Z0A1B';

type Body = Record<string, unknown>;

/** A complete, realistic registration body (RegisterAgentBody); `overrides` replace top-level fields. */
export function agentBody(overrides: Body = {}): Body {
  return {
    display_name: 'Northwind Triage Agent',
    jurisdiction: 'GB',
    description: 'Triage assistant for chest pain and stroke pathways.',
    endpoints: [
      {
        url: 'https://agents.example.org:8443/a2a/v1',
        protocol: 'mesh-a2a-jsonrpc',
        priority: 10,
        weight: 100,
        health_url: 'https://agents.example.org:8443/healthz',
        region: 'uk-south',
      },
    ],
    capabilities: {
      protocols: ['mesh-a2a-jsonrpc', 'fhir-rest'],
      skills: ['triage.chest-pain', 'triage.stroke', 'consent.verify'],
      features: ['streaming'],
      token_binding: 'dpop',
      fhir_r4: true,
      consent_support: true,
    },
    trust: { certificates: [CERT_PEM], signatures: [JWS], attestations: [], jwks: { keys: [JWK] } },
    owner: {
      org_id: 'ods:RX1',
      org_name: 'Northwind NHS Foundation Trust',
      operator: 'ops@nhs-trust.example.org',
    },
    policy_tags: {
      purpose_of_use: ['treatment'],
      phi_allowed: false,
      max_concurrency: 200,
      rate_limit_rps: 50,
    },
    ...overrides,
  };
}

const withDescription = (description: string): Body => agentBody({ description });
const withOwner = (extra: Body): Body =>
  agentBody({ owner: { org_name: 'Northwind NHS Foundation Trust', ...extra } });
const withTags = (extra: Body): Body =>
  agentBody({ policy_tags: { purpose_of_use: ['treatment'], ...extra } });
const withEndpoint = (extra: Body): Body =>
  agentBody({
    endpoints: [{ url: 'https://agents.example.org:8443/a2a/v1', protocol: 'mesh-a2a-jsonrpc', ...extra }],
  });

const PID = 'PID|1||12345^^^HOSP^MR||DOE^JOHN||19800101|M';
const MSH = 'MSH|^~\\&|EPIC|NORTHWIND|WARD|REGISTRY|202501151030||ADT^A01|MSG00001|P|2.5';
const FHIR_PATIENT = {
  resourceType: 'Patient',
  id: 'p1',
  name: [{ family: 'Doe', given: ['John'] }],
  gender: 'male',
};
const FHIR_OBSERVATION = { resourceType: 'Observation', status: 'final', code: { text: 'Heart rate' } };

const blocked = (
  name: string,
  input: unknown,
  detector: PhiDetectorName,
  pointer: string,
): BlockedSample => ({
  name,
  in: 'body',
  input,
  detector,
  pointer,
});
const blockedQuery = (
  name: string,
  input: unknown,
  detector: PhiDetectorName,
  pointer: string,
): BlockedSample => ({
  name,
  in: 'query',
  input,
  detector,
  pointer,
});

export const BLOCKED: readonly BlockedSample[] = [
  // US SSN
  blocked(
    'dashed SSN in a description',
    withDescription('Example caller SSN 123-45-6789 on file.'),
    'us_ssn',
    '/description',
  ),
  blocked(
    'spaced SSN in the operator',
    withOwner({ operator: 'J. Smith, 219 09 9999' }),
    'us_ssn',
    '/owner/operator',
  ),
  blocked(
    'labelled bare SSN',
    withTags({ notes: 'social security number: 536228726' }),
    'us_ssn',
    '/policy_tags/notes',
  ),
  blocked('SSN as a number under an ssn key', withTags({ ssn: 123456789 }), 'us_ssn', '/policy_tags/ssn'),
  blocked(
    'SSN under social_security_number',
    withOwner({ social_security_number: '078-05-1120' }),
    'us_ssn',
    '/owner/social_security_number',
  ),
  blocked(
    'SSN in an array',
    agentBody({ capabilities: { skills: ['triage.stroke', '409-52-2002'] } }),
    'us_ssn',
    '/capabilities/skills/1',
  ),
  blocked('SSN as an object key', withTags({ '123-45-6789': true }), 'us_ssn', '/policy_tags'),
  blocked(
    'SSN in a URL query',
    withEndpoint({ url: 'https://agents.example.org/a2a/v1?patient_ssn=212671234' }),
    'us_ssn',
    '/endpoints/0/url',
  ),
  blocked('spaced SSN as the whole body', 'SSN 078 05 1120', 'us_ssn', ''),
  blockedQuery('labelled SSN in a query parameter', { q: 'ssn:123456789' }, 'us_ssn', '/query/q'),
  // UK NHS number
  blocked(
    'labelled spaced NHS number',
    withDescription('Referral for NHS number 943 476 5919 pending.'),
    'uk_nhs_number',
    '/description',
  ),
  blocked(
    'bare NHS number in an array',
    agentBody({ trust: { attestations: ['9434765919'] } }),
    'uk_nhs_number',
    '/trust/attestations/0',
  ),
  blocked(
    'dashed NHS number',
    withOwner({ operator: 'ref 943-476-5919' }),
    'uk_nhs_number',
    '/owner/operator',
  ),
  blocked(
    'NHS number as a number under nhs_number',
    withTags({ nhs_number: 9434765919 }),
    'uk_nhs_number',
    '/policy_tags/nhs_number',
  ),
  blocked('NHS number under nhs_no', withOwner({ nhs_no: NHS_A }), 'uk_nhs_number', '/owner/nhs_no'),
  blocked(
    'spaced NHS number in prose',
    withDescription(`Re-referral for ${spaced(NHS_B)} next week.`),
    'uk_nhs_number',
    '/description',
  ),
  blocked('compact labelled NHS number', withDescription(`NHSNo:${NHS_C}`), 'uk_nhs_number', '/description'),
  blocked(
    'NHS number in a URL path',
    withEndpoint({ url: `https://agents.example.org/patients/${NHS_D}/summary` }),
    'uk_nhs_number',
    '/endpoints/0/url',
  ),
  blocked('NHS number as an object key', withTags({ [NHS_A]: 'active' }), 'uk_nhs_number', '/policy_tags'),
  blocked(
    'NHS numbers as numbers in a labelled array',
    withTags({ nhs_number: ['unknown', 9434765919] }),
    'uk_nhs_number',
    '/policy_tags/nhs_number/1',
  ),
  blockedQuery(
    'NHS number in a repeated query parameter',
    { nhs: ['unknown', NHS_B] },
    'uk_nhs_number',
    '/query/nhs/1',
  ),
  // MRN
  blocked('labelled MRN', withDescription('Escalation for MRN: 12345678.'), 'mrn', '/description'),
  blocked(
    'medical record number with #',
    withOwner({ operator: 'Medical record number #A-0045821' }),
    'mrn',
    '/owner/operator',
  ),
  blocked(
    'patient id in a URL',
    withEndpoint({ health_url: 'https://agents.example.org/h?patient_id=PT-99812' }),
    'mrn',
    '/endpoints/0/health_url',
  ),
  blocked(
    'patient id with "was"',
    withDescription('Escalated: patient id was PT-99812.'),
    'mrn',
    '/description',
  ),
  blocked('hospital number', withDescription('Hospital number: H1234567'), 'mrn', '/description'),
  blocked('case number', withTags({ ticket: 'case number - 2024/00123' }), 'mrn', '/policy_tags/ticket'),
  blocked('spaced MRN digits', withDescription('MRN 12 345 678'), 'mrn', '/description'),
  blocked('MRN under an mrn key', withTags({ mrn: 'A1234567' }), 'mrn', '/policy_tags/mrn'),
  blocked(
    'MRN as a number under medical_record_number',
    withOwner({ medical_record_number: 4455667 }),
    'mrn',
    '/owner/medical_record_number',
  ),
  blocked('patient_id key', withTags({ patient_id: 'P-000123' }), 'mrn', '/policy_tags/patient_id'),
  blocked('MRN inside an object key', withTags({ 'MRN: 00123456': 'seen' }), 'mrn', '/policy_tags'),
  blockedQuery('MRN query parameter', { mrn: '12345678' }, 'mrn', '/query/mrn'),
  // Date of birth
  blocked(
    'DOB in ISO form',
    withDescription('Test patient DOB: 1980-03-12'),
    'date_of_birth',
    '/description',
  ),
  blocked(
    'D.O.B. with slashes',
    withOwner({ operator: 'D.O.B. 12/03/1980' }),
    'date_of_birth',
    '/owner/operator',
  ),
  blocked(
    'date of birth with dashes',
    withDescription('date of birth 03-12-1980'),
    'date_of_birth',
    '/description',
  ),
  blocked(
    'born on with a month name',
    withDescription('Patient born on 12 March 1980 in Leeds.'),
    'date_of_birth',
    '/description',
  ),
  blocked(
    'birth date US style',
    withTags({ notes: 'Birth date: March 12, 1980' }),
    'date_of_birth',
    '/policy_tags/notes',
  ),
  blocked(
    'compact birthdate',
    withEndpoint({ url: 'https://agents.example.org/a2a/v1?birthdate=19800312' }),
    'date_of_birth',
    '/endpoints/0/url',
  ),
  blocked('dob key', withTags({ dob: '1980-03-12' }), 'date_of_birth', '/policy_tags/dob'),
  blocked(
    'birthDate key outside FHIR',
    withOwner({ birthDate: '1975-11-30' }),
    'date_of_birth',
    '/owner/birthDate',
  ),
  blocked(
    'date_of_birth key, UK style',
    withTags({ date_of_birth: '12/03/1980' }),
    'date_of_birth',
    '/policy_tags/date_of_birth',
  ),
  blocked(
    'partial date under Date-Of-Birth',
    withTags({ 'Date-Of-Birth': '1980-05' }),
    'date_of_birth',
    '/policy_tags/Date-Of-Birth',
  ),
  blocked(
    'escaped pointer for a key with / and ~',
    withTags({ 'notes/2025~draft': 'DOB 1980-03-12' }),
    'date_of_birth',
    '/policy_tags/notes~12025~0draft',
  ),
  blockedQuery(
    'FHIR-style birthdate search',
    { birthdate: 'eq1980-03-12' },
    'date_of_birth',
    '/query/birthdate',
  ),
  blockedQuery('dob query parameter', { dob: '1980-03-12' }, 'date_of_birth', '/query/dob'),
  // FHIR patient-data resources
  blocked(
    'Patient resource in an array',
    agentBody({ examples: [FHIR_PATIENT] }),
    'fhir_resource',
    '/examples/0',
  ),
  blocked(
    'Observation inside a Bundle',
    agentBody({
      sample: { resourceType: 'Bundle', type: 'collection', entry: [{ resource: FHIR_OBSERVATION }] },
    }),
    'fhir_resource',
    '/sample/entry/0/resource',
  ),
  blocked(
    'Condition as a JSON string',
    withDescription('{"resourceType":"Condition","code":{"text":"Type 2 diabetes"}}'),
    'fhir_resource',
    '/description',
  ),
  blocked(
    'Encounter in a JSON array string',
    withTags({ example: ' [{"resourceType": "Encounter", "status": "finished"}]' }),
    'fhir_resource',
    '/policy_tags/example',
  ),
  blocked(
    'MedicationRequest nested deep',
    withTags({ context: { payload: { resource: { resourceType: 'MedicationRequest', status: 'active' } } } }),
    'fhir_resource',
    '/policy_tags/context/payload/resource',
  ),
  blocked(
    'Patient in FHIR XML',
    withDescription('<Patient xmlns="http://hl7.org/fhir"><id value="p1"/></Patient>'),
    'fhir_resource',
    '/description',
  ),
  blocked('Patient as the whole body', FHIR_PATIENT, 'fhir_resource', ''),
  blocked(
    'Bundle JSON string holding AllergyIntolerance',
    agentBody({
      trust: {
        signatures: [
          JWS,
          JSON.stringify({
            resourceType: 'Bundle',
            entry: [{ resource: { resourceType: 'AllergyIntolerance' } }],
          }),
        ],
      },
    }),
    'fhir_resource',
    '/trust/signatures/1',
  ),
  blocked(
    'Coverage in nested arrays',
    agentBody({ examples: [[{ note: 'x' }, { resourceType: 'Coverage', status: 'active' }]] }),
    'fhir_resource',
    '/examples/0/1',
  ),
  // HL7v2 PID
  blocked('bare PID segment', withDescription(PID), 'hl7v2_pid', '/description'),
  blocked(
    'MSH message with CR segments',
    withTags({ sample: `${MSH}\rEVN|A01|202501151030\r${PID}` }),
    'hl7v2_pid',
    '/policy_tags/sample',
  ),
  blocked(
    'MSH message with LF segments',
    agentBody({ trust: { attestations: [`${MSH}\n${PID}\nPV1|1|I`] } }),
    'hl7v2_pid',
    '/trust/attestations/0',
  ),
  blocked(
    'MSH message flattened with spaces',
    withDescription(`${MSH} PID|1||555^^^H^MR|`),
    'hl7v2_pid',
    '/description',
  ),
  blocked('PID after a still-escaped \\r', withDescription(`${MSH}\\r${PID}`), 'hl7v2_pid', '/description'),
  blockedQuery(
    'PID segment in a query parameter',
    { msg: 'PID|1||12345^^^HOSP^MR||DOE^JOHN' },
    'hl7v2_pid',
    '/query/msg',
  ),  // Disguised forms (issue 19, finding 2): the same PHI once normalised or decoded (src/core/phi/normalise.ts).
  blocked('SSN with dots', withDescription('Caller SSN 123.45.6789 on file.'), 'us_ssn', '/description'),
  blocked('SSN with Unicode en dashes', withDescription('Ref 123\u201345\u20136789'), 'us_ssn', '/description'),
  blocked('SSN with a minus sign and non-breaking hyphens', withDescription('SSN 123\u221245\u20116789'), 'us_ssn', '/description'),
  blocked('SSN in full-width digits', withDescription('Caller \uff11\uff12\uff13-\uff14\uff15-\uff16\uff17\uff18\uff19'), 'us_ssn', '/description'),
  blocked('SSN split by zero-width spaces', withDescription('SSN 123\u200b-45-\u200b6789'), 'us_ssn', '/description'),
  blocked('SSN as HTML entities', withDescription('SSN &#49;23-45-6789'), 'us_ssn', '/description'),
  blocked('SSN dashes as named entities', withDescription('SSN 123&ndash;45&ndash;6789'), 'us_ssn', '/description'),
  blocked('SSN as a JSON number under a *_ssn key', withTags({ patient_ssn: 123456789 }), 'us_ssn', '/policy_tags/patient_ssn'),
  blocked('NHS number with zero-width joiners', withDescription(`NHS ${NHS_A.slice(0, 3)}\u200d${NHS_A.slice(3, 6)}\u2060${NHS_A.slice(6)}`), 'uk_nhs_number', '/description'),
  blocked('NHS number in full-width digits', withDescription(`Patient ${[...NHS_B].map((d) => String.fromCharCode(0xff10 + Number(d))).join('')}`), 'uk_nhs_number', '/description'),
  blocked('NHS number with a soft hyphen', withDescription(`NHS no ${NHS_C.slice(0, 3)}\u00ad${NHS_C.slice(3)}`), 'uk_nhs_number', '/description'),
  blocked('percent-encoded NHS number', withDescription(`see /lookup?nhs=${NHS_D.slice(0, 3)}%20${NHS_D.slice(3, 6)}%20${NHS_D.slice(6)}`), 'uk_nhs_number', '/description'),
  blocked('percent-encoded SSN', withTags({ link: 'https://x.example/p?ssn%3D123-45-6789' }), 'us_ssn', '/policy_tags/link'),
  blocked('base64 of a labelled MRN', withDescription(`payload ${Buffer.from('MRN: 00482913').toString('base64')}`), 'mrn', '/description'),
  blocked('base64url of an SSN sentence', withTags({ blob: Buffer.from('caller SSN is 123-45-6789').toString('base64url') }), 'us_ssn', '/policy_tags/blob'),
  blocked('JSON inside a string', withTags({ raw: JSON.stringify({ patient: { ssn: '123-45-6789' } }) }), 'us_ssn', '/policy_tags/raw'),
  blocked(
    'JSON inside a deeply placed string, its PHI only readable as JSON (a label in one field, the value in another)',
    agentBody({ policy_tags: { notes: { raw: JSON.stringify({ field: 'MRN', value: 'A0045821' }) } } }),
    'mrn',
    '/policy_tags/notes/raw',
  ),
  blocked('a DOB label behind entities', withDescription('D&#79;B: 1980-03-12'), 'date_of_birth', '/description'),
  blocked('an MRN label in full-width letters', withDescription('\uff2d\uff32\uff2e: 00482913'), 'mrn', '/description'),
  blockedQuery('a zero-width SSN in a query', { q: '123\u200c-45-6789' }, 'us_ssn', '/query/q'),
  blockedQuery('a percent-encoded MRN in a query value', { q: 'MRN%3A%2000482913' }, 'mrn', '/query/q'),  // Labels elsewhere (issue 19, finding 2): other languages, other identifiers, other segments, split fields.
  blocked('a Spanish birth label', withDescription('Paciente: fecha de nacimiento 12/03/1980'), 'date_of_birth', '/description'),
  blocked('a French birth label', withDescription('Née le 12/03/1980 à Lille'), 'date_of_birth', '/description'),
  blocked('a German birth label', withDescription('Geburtsdatum: 12.03.1980'), 'date_of_birth', '/description'),
  blocked('an Italian birth label', withDescription('data di nascita 1980-03-12'), 'date_of_birth', '/description'),
  blocked('a Dutch birth label', withDescription('geboortedatum: 12-03-1980'), 'date_of_birth', '/description'),
  blocked('"med rec no." label', withDescription('Med. rec. no. 00482913'), 'mrn', '/description'),
  blocked('a chart number', withDescription('chart # 4471-2209'), 'mrn', '/description'),
  blocked('a CHI number, labelled', withDescription('CHI 1203801234'), 'mrn', '/description'),
  blocked('a Medicare number, labelled', withDescription('Medicare card number 2953 51674 1'), 'mrn', '/description'),
  blocked('an insurance member id', withTags({ note: 'insurance member id W123456789' }), 'mrn', '/policy_tags/note'),
  blocked('a member id under its key', withTags({ member_id: 'XKZ90011' + '2' }), 'mrn', '/policy_tags/member_id'),
  blocked('a DG1 diagnosis segment', withDescription('DG1|1||I10^Essential hypertension^I10||20250101|A'), 'hl7v2_pid', '/description'),
  blocked('an NK1 next-of-kin segment', withTags({ sample: `${MSH}\rNK1|1|DOE^JANE|SPO^Spouse|12 HIGH ST` }), 'hl7v2_pid', '/policy_tags/sample'),
  blocked('a label and its value in separate fields', withTags({ field: 'DOB', value: '1980-03-12' }), 'date_of_birth', '/policy_tags/value'),
  blocked('an NHS label then its value in an array', withTags({ pairs: ['NHS number', `${NHS_A.slice(0, 3)}-${NHS_A.slice(3, 6)}-${NHS_A.slice(6)}`] }), 'uk_nhs_number', '/policy_tags/pairs/1'),
  blocked('an MRN label then its value in an array', withTags({ pairs: ['MRN', 'A0045821'] }), 'mrn', '/policy_tags/pairs/1'),
  // A person beside a health condition (corpus-patient-context.ts).
  ...PATIENT_CONTEXT_BLOCKED,
  // Identifiers as numbers, in pieces, in URL paths, behind hospital labels; deep FHIR (corpus-shapes.ts).
  ...shapeSamples().blocked,
];

const ordinary = (name: string, input: unknown): OrdinarySample => ({ name, in: 'body', input });

export const ORDINARY: readonly OrdinarySample[] = [
  ordinary('the baseline registration body', agentBody()),
  ...[
    'Triage assistant for chest pain and stroke pathways.',
    'Consent verification per FHIR R4 Consent.',
    'Supports HL7v2 ADT feeds over MLLP (hl7v2-mllp).',
    'Parses HL7v2 PID segments (PID-3, PID-5, PID-7) and maps them to a FHIR Patient.',
    'Accepts HL7v2 messages with MSH, PID, PV1 and OBX segments.',
    'FHIR R4 Observation support, including vital signs; reads Patient and Condition.',
    'Supports MRN lookup via PDQm. MRN matching service for the EMPI.',
    'Date of birth and NHS number verification against PDS; DOB matching with tolerance.',
    'Patient ID resolution via PIX; case numbers are never stored. Born-digital records only.',
    'Certified 2024-03-12 under DTAC; valid until 2027-01-01; reviewed on 3 March 2025.',
    'Validates NHS numbers with the mod-11 check and rejects 10-digit values that fail it.',
    `Order ${BAD_E} and invoice INV ${BAD_A} reference the procurement; PO ${BAD_B}.`,
    'Runs on Node 24.11.1; API v2.4.1; build 2025.06.17-1432; schema 3.0.0-rc.2.',
    'Open 24/7. SLA 99.95% monthly, p99 latency 350 ms, 8443/tcp.',
    'Support line +44 20 7946 0958, or call 0800 123 4567 (freephone).',
    `US support: call ${PHONE_MOD11_B} or +1 ${PHONE_MOD11_A}.`,
    'Ticket prefix 123-456-7890 for escalations.',
    'Confidence threshold 0.9434765919 calibrated on synthetic data.',
    'Model digest 9434765919abcdef0123456789abcdef0123456789abcdef0123456789abcdef.',
    'Covers ICD-10 I21.4 and I63.9; SNOMED CT 22298006; LOINC 8867-4.',
    'Example SSN formats are rejected: 000-12-3456, 666-12-3456, 912-34-5678, 123-00-4567, 123-45-0000.',
    'Deployed in GB-ENG and GB-WLS; pilot in US-CA. Contact ops@nhs-trust.example.org.',
    'Pipe-delimited sample header: MSH|^~\\&|WARD|NORTHWIND|REGISTRY|GB|202501151030||ACK|1|P|2.5',
  ].map((description) => ordinary(`description: ${description.slice(0, 60)}`, withDescription(description))),
  ordinary(
    'HL7v2 MLLP endpoint with a port',
    withEndpoint({ url: 'mllp://hl7.northwind.example.org:2575', protocol: 'hl7v2-mllp' }),
  ),
  ordinary(
    'FHIR endpoint with a path',
    withEndpoint({ url: 'https://fhir.northwind.example.org/R4/metadata', protocol: 'fhir-rest' }),
  ),
  ordinary(
    'registry URI and ULID',
    withTags({ agent_id: `registry://gb/agents/${AGENT_ULID}`, ulid: AGENT_ULID }),
  ),
  ordinary('ULID with a long digit run inside', withTags({ trace_ulid: '01J9434765919Q0V2W4X6Y8Z0A' })),
  ordinary(
    'UUIDs, including an all-digit last group',
    withTags({
      request_id: '550e8400-e29b-41d4-a716-446655440000',
      idempotency_key: '123e4567-e89b-12d3-a456-426614174000',
    }),
  ),
  ordinary(
    'ISO timestamps and a 13-digit epoch',
    withTags({
      created_at: '2025-01-15T10:30:00.000Z',
      updated_at: '2025-06-17T14:32:05.123+01:00',
      updated_ms: '1736937000000',
    }),
  ),
  ordinary(
    'numbers are only PHI under a labelling key',
    withTags({ quota_bytes: 9434765919, max_concurrency: 2000, rate_limit_rps: 1000000 }),
  ),
  ordinary(
    'labelled keys without identifiers',
    withTags({
      mrn: 'supported',
      dob: 'not collected',
      nhs_number: null,
      ssn: false,
      patient_id_format: 'alphanumeric',
    }),
  ),
  ordinary(
    'labelled keys holding format hints and an ODS code',
    withTags({ mrn: 'pdqm-r4', patient_id: 'hl7v2', nhs: 'E85120', dob_format: 'YYYY-MM-DD' }),
  ),
  ordinary(
    'capability flags named after FHIR',
    agentBody({
      capabilities: { protocols: ['fhir-rest', 'hl7v2-mllp'], fhir_r4: true, patient_lookup: true },
    }),
  ),
  ordinary(
    'non-patient FHIR resources',
    agentBody({
      examples: [
        { resourceType: 'CapabilityStatement', status: 'active', fhirVersion: '4.0.1' },
        { resourceType: 'Organization', name: 'Northwind' },
      ],
    }),
  ),
  ordinary(
    'a prose mention of a resource type in a JSON string',
    withTags({ note: '{"supports": "Patient, Observation", "version": "R4"}' }),
  ),
  ordinary(
    'support phone numbers under phone keys',
    withOwner({
      support_phone: PHONE_MOD11_A,
      supportTel: PHONE_MOD11_B,
      telephone: PHONE_MOD11_C,
      fax: '+44 113 496 0000',
    }),
  ),
  ordinary('an X.509 PEM certificate alone', { certificate: CERT_PEM }),
  ordinary('a compact JWS and a JWK', { signature: JWS, jwk: JWK }),
  ordinary(
    'long hex strings',
    withTags({
      sha256: 'a3f5c9e1d2b4968700ff1e2d3c4b5a69788796a5b4c3d2e1f00112233445566',
      x5t: '9434765919abcdef',
    }),
  ),
  ordinary(
    'versions, IPs and ports',
    withTags({ version: '10.2.1', ip: '10.20.30.40:2575', image: 'ghcr.io/northwind/triage:2025.06.17' }),
  ),
  ordinary(
    'plain dates not labelled as birth dates',
    withTags({ effective: '2025-01-01', expires: '01/01/2027', review: '12 March 2026' }),
  ),
  {
    name: 'an ordinary list query',
    in: 'query',
    input: {
      jurisdiction: 'GB',
      status: 'active',
      limit: '20',
      cursor: 'eyJrIjoiMDFKQjdRNFI2UzhUMFYyVzRYNlk4WjBBMUIifQ',
    },
  },
  {
    name: 'a FHIR-style search parameter in a query',
    in: 'query',
    input: { resourceType: 'Patient', protocol: 'fhir-rest' },
  },
  // Look-alikes of the disguised forms: Unicode, entities and encodings that carry no PHI.
  ordinary('typographic dashes and spaces in prose', withDescription('Triage \u2013 stroke pathway\u00a0(2024\u20132026); 24\u00a07 cover \u2014 NHS England.')),
  ordinary('full-width and accented text', withDescription('\uff37\uff41\uff52\uff44 \u30c8\u30ea\u30a2\u30fc\u30b8 \u2014 soins \u00e0 domicile, r\u00e9gion \u00cele-de-France')),
  ordinary('HTML entities in a description', withDescription('Consent &amp; triage for A&amp;E &lt;24h&gt;; see &quot;Pathways&quot; &#8212; v2.')),
  ordinary('percent-encoded endpoint URLs', withEndpoint({ url: 'https://agents.example.org/a2a/v1?scope=triage%20stroke&region=uk%2Dsouth' })),
  ordinary('dotted versions and a build number', withTags({ version: '12.4.6789', build: '2025.06.17.1234', sdk: '1.45.6789-beta', oid: '2.16.840.1.113883.2.1.4.1' })),
  ordinary('a base64 JWK and a hash', withTags({ x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', sha256: 'n4bQgYhMfWWaL-qgxVrQFaO_TxsrC4Is0V1sFbDwCgg' })),
  ordinary('a base64 PNG header', withTags({ icon: 'iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAYAAAAf8/9hAAAAAXNSR0IArs4c6QAAAARnQU1BAACxjwv8YQUAAAAJcEhZcwAADsMAAA7DAcdvqGQ' })),
  ordinary('base64 of ordinary text', withTags({ note: Buffer.from('Triage v2 release 2025-06-17, 24/7 cover').toString('base64') })),
  ordinary('JSON inside a string without PHI', withTags({ raw: JSON.stringify({ pathway: 'stroke', version: 3, regions: ['GB', 'IE'] }) })),
  ordinary('zero-width characters in a brand name', withDescription('North\u200bwind Health \u2060Triage\ufeff')),
  ordinary('field descriptions naming identifiers', withTags({ fields: [{ field: 'mrn', max_length: 16, required: true }, { field: 'DOB', format: 'date' }] })),
  ordinary('a label list without values', withTags({ accepted_identifiers: ['NHS number', 'MRN', 'DOB', 'CHI number'] })),
  ordinary('HL7 segment names in prose', withDescription('Maps PID, NK1, DG1 and IN1 segments from ADT^A01 to FHIR; GT1 is ignored.')),
  ordinary('member and chart words without identifiers', withDescription('Member services and chart review for the Leeds unit; policy holders get a summary.')),
  ordinary('dates near French and German words', withDescription('Mise à jour le 12/03/2025; geprüft am 12.03.2025; née is a word in the glossary.')),
  {
    name: 'repeated query parameters',
    in: 'query',
    input: { skill: ['triage.stroke', 'consent.verify'], since: '2025-01-15T10:30:00Z' },
  },
  // Names, conditions and contact details that are not about a patient (corpus-patient-context.ts).
  ...PATIENT_CONTEXT_ORDINARY,
  // Look-alikes of the forms in corpus-shapes.ts.
  ...shapeSamples().ordinary,
];
