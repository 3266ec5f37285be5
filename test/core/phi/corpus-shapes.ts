/**
 * The forms a security review's hidden corpus got past the guard (issue 28, item 4), five or more
 * samples of each, written for this corpus (not the review's), with look-alikes that must pass:
 * identifiers as JSON numbers, split over array items, behind a hospital-number label, in a URL path,
 * a name, a birth label and a date in separate fields, and a FHIR Patient nested past the depth limit.
 */
import type { BlockedSample, OrdinarySample } from './sample.ts';
import { agentBody } from './corpus.ts';

type Body = Record<string, unknown>;

const withTags = (extra: Body): Body =>
  agentBody({ policy_tags: { purpose_of_use: ['treatment'], ...extra } });
const withOwner = (extra: Body): Body =>
  agentBody({ owner: { org_name: 'Northwind NHS Foundation Trust', ...extra } });
const withDescription = (description: string): Body => agentBody({ description });
const withEndpoint = (extra: Body): Body =>
  agentBody({
    endpoints: [{ url: 'https://agents.example.org:8443/a2a/v1', protocol: 'mesh-a2a-jsonrpc', ...extra }],
  });

/** The mod-11 check digit, computed here (not by the code under test); undefined when it would be 10. */
function withCheck(first9: string): string | undefined {
  const sum = [...first9].reduce((acc, digit, i) => acc + Number(digit) * (10 - i), 0);
  const check = 11 - (sum % 11);
  return check === 10 ? undefined : `${first9}${check % 11}`;
}

/** The first 10-digit numbers from `start` (as nine-digit prefixes) that pass mod-11: epochs that look like NHS numbers. */
function passingFrom(start: number, count: number): number[] {
  const found: number[] = [];
  for (let prefix = start; found.length < count; prefix += 1) {
    const whole = withCheck(String(prefix));
    if (whole !== undefined) found.push(Number(whole));
  }
  return found;
}

const NHS = '4010232138'.slice(0, 9);
const NHS_NUMBER = withCheck(NHS) as string;
const [EPOCH_A = 0, EPOCH_B = 0, EPOCH_C = 0] = passingFrom(173_275_201, 3);

const blocked = (
  name: string,
  input: unknown,
  detector: BlockedSample['detector'],
  pointer: string,
): BlockedSample => ({ name, in: 'body', input, detector, pointer });
const ordinary = (name: string, input: unknown): OrdinarySample => ({ name, in: 'body', input });

/** `leaf` under `levels` objects inside the policy tags, and the pointer of where the scan first meets it (its own, or the sweep's cut at depth 65). */
function nested(levels: number, leaf: unknown): { body: Body; pointer: string } {
  let value = leaf;
  for (let i = 0; i < levels; i += 1) value = { wrapper: value };
  const depthOfLeaf = 2 + levels; // policy_tags (1) → context (2) → wrappers
  const shown = Math.min(levels, 65 - 2);
  const pointer = `/policy_tags/context${'/wrapper'.repeat(depthOfLeaf > 65 ? shown : levels)}`;
  return { body: withTags({ context: value }), pointer };
}

/**
 * Built on call, not at load: corpus.ts imports this file and its `agentBody` reads constants of its
 * own that are set only once corpus.ts runs.
 */
export function shapeSamples(): { blocked: BlockedSample[]; ordinary: OrdinarySample[] } {
  const PATIENT = {
    resourceType: 'Patient',
    id: 'p7',
    name: [{ family: 'Okafor', given: ['Ada'] }],
    birthDate: '1971-05-04',
  };
  const deep40 = nested(40, PATIENT);
  const deep80 = nested(80, PATIENT);
  const deep200 = nested(200, { resourceType: 'Bundle', entry: [{ resource: PATIENT }] });
  const deep34 = nested(34, [
    { resource: { resourceType: 'Observation', status: 'final', subject: { reference: 'Patient/p7' } } },
  ]);
  const deep50Array = nested(50, [[[PATIENT]]]);

  const blockedSamples: BlockedSample[] = [
    // An identifier as a JSON number.
    blocked(
      'an SSN as a number under a key ending in ssn',
      withTags({ member_ssn: 536228726 }),
      'us_ssn',
      '/policy_tags/member_ssn',
    ),
    blocked(
      'an SSN as a number beside its type',
      withTags({ subject: { type: 'SSN', value: 219099999 } }),
      'us_ssn',
      '/policy_tags/subject/value',
    ),
    blocked(
      'an NHS number as a number after its label',
      withTags({ ids: ['NHS number', Number(NHS_NUMBER)] }),
      'uk_nhs_number',
      '/policy_tags/ids/1',
    ),
    blocked(
      'an NHS number as a bare number',
      withTags({ reference: 9434765919 }),
      'uk_nhs_number',
      '/policy_tags/reference',
    ),
    blocked(
      'a hospital number as a number under hospitalNo',
      withTags({ patient: { hospitalNo: 40012345 } }),
      'mrn',
      '/policy_tags/patient/hospitalNo',
    ),
    blocked(
      'a birth date as an eight-digit number beside its system',
      withTags({ identifier: { system: 'dob', value: 19800312 } }),
      'date_of_birth',
      '/policy_tags/identifier/value',
    ),
    // An identifier split over consecutive array items.
    blocked(
      'an NHS number in three string items',
      withTags({ ref: ['943', '476', '5919'] }),
      'uk_nhs_number',
      '/policy_tags/ref',
    ),
    blocked(
      'an NHS number in three number items',
      withTags({ ref: [943, 476, 5919] }),
      'uk_nhs_number',
      '/policy_tags/ref',
    ),
    blocked(
      'an SSN in three items',
      withTags({ parts: ['123', '45', '6789'] }),
      'us_ssn',
      '/policy_tags/parts',
    ),
    blocked(
      'a hospital number after its label, over items',
      agentBody({ capabilities: { skills: ['triage.stroke', 'hosp no', '004', '82913'] } }),
      'mrn',
      '/capabilities/skills',
    ),
    blocked(
      'a labelled NHS number over four items',
      withTags({ contacts: ['NHS', '943', '476', '5919'] }),
      'uk_nhs_number',
      '/policy_tags/contacts',
    ),
    blocked(
      'a dashed NHS number over items',
      withTags({ code: [NHS_NUMBER.slice(0, 3), '-', NHS_NUMBER.slice(3, 6), '-', NHS_NUMBER.slice(6)] }),
      'uk_nhs_number',
      '/policy_tags/code',
    ),
    // UK hospital numbers behind a hospital-number label.
    blocked(
      'Hospital No. in a description',
      withDescription('Escalations quote the Hospital No. RXH1234567 of the caller.'),
      'mrn',
      '/description',
    ),
    blocked(
      'Hosp no: in the operator',
      withOwner({ operator: 'Hosp no: 00482913' }),
      'mrn',
      '/owner/operator',
    ),
    blocked(
      'hosp. number in a note',
      withTags({ notes: 'hosp. number 4455667 on the wristband' }),
      'mrn',
      '/policy_tags/notes',
    ),
    blocked(
      'Hospital ID in a note',
      withTags({ notes: 'Hospital ID: H-778812' }),
      'mrn',
      '/policy_tags/notes',
    ),
    blocked('a hospital_no key', withTags({ hospital_no: 'RTH0012345' }), 'mrn', '/policy_tags/hospital_no'),
    blocked('a hospital_ref key', withTags({ hospital_ref: 'A998877' }), 'mrn', '/policy_tags/hospital_ref'),
    blocked(
      'hosp ref in prose',
      withDescription('Referral letters carry the hosp ref 9988776 in the header.'),
      'mrn',
      '/description',
    ),
    // Identifiers in the path (or query) of an endpoint's URL.
    blocked(
      'an MRN in an endpoint path',
      withEndpoint({ url: 'https://ehr.example.org/api/patients/mrn/00482913' }),
      'mrn',
      '/endpoints/0/url',
    ),
    blocked(
      'a patient id in a FHIR read URL',
      withEndpoint({ url: 'https://fhir.example.org/r4/Patient/00482913' }),
      'mrn',
      '/endpoints/0/url',
    ),
    blocked(
      'an SSN in a path',
      withEndpoint({ url: 'https://benefits.example.gov/ssn/219099999/claims' }),
      'us_ssn',
      '/endpoints/0/url',
    ),
    blocked(
      'a patient in a health URL query',
      withEndpoint({ health_url: 'https://ehr.example.org/health?patient=00482913' }),
      'mrn',
      '/endpoints/0/health_url',
    ),
    blocked(
      'a birth date in a path',
      withEndpoint({ url: 'https://ehr.example.org/records/dob/1980-03-12/lookup' }),
      'date_of_birth',
      '/endpoints/0/url',
    ),
    blocked(
      'a hospital number in a path',
      withEndpoint({ url: 'https://ehr.example.org/hospital-number/RXH1234567' }),
      'mrn',
      '/endpoints/0/url',
    ),
    blocked(
      'an MRN in a relative path',
      withTags({ callback: '/patients/mrn/A0045821' }),
      'mrn',
      '/policy_tags/callback',
    ),
    // A name, a birth label and a date in separate fields.
    blocked(
      'a name ending in DOB, the date beside it',
      withTags({ who: 'Jane Doe, DOB', when: '1980-03-12' }),
      'date_of_birth',
      '/policy_tags/when',
    ),
    blocked(
      'a name and a born key',
      withTags({ person: 'John Smith', born: '12 March 1980' }),
      'date_of_birth',
      '/policy_tags/born',
    ),
    blocked(
      'a name and a birthday key',
      withOwner({ operator: 'Ann Lee', birthday: '1975-11-02' }),
      'date_of_birth',
      '/owner/birthday',
    ),
    blocked(
      'a name and a key ending in Dob',
      withTags({ subject: { name: 'Mary Jones', guarantorDob: '02/11/1975' } }),
      'date_of_birth',
      '/policy_tags/subject/guarantorDob',
    ),
    blocked(
      'a note ending in born on, the date beside it',
      withTags({ note: 'Patient Ann Lee, born on', date: '2 Nov 1975' }),
      'date_of_birth',
      '/policy_tags/date',
    ),
    blocked(
      'a label, a name and a date as three fields',
      withTags({ label: 'Date of birth', name: 'Ada Okafor', value: '04/05/1971' }),
      'date_of_birth',
      '/policy_tags/value',
    ),
    // A FHIR Patient nested deep, past the depth limit, whatever else is wrong with the body.
    blocked('a Patient 40 levels down', deep40.body, 'fhir_resource', deep40.pointer),
    blocked(
      'a Patient 80 levels down, below what the scan reads',
      deep80.body,
      'fhir_resource',
      deep80.pointer,
    ),
    blocked('a Patient in a Bundle 200 levels down', deep200.body, 'fhir_resource', deep200.pointer),
    blocked('an Observation 34 levels down', deep34.body, 'fhir_resource', `${deep34.pointer}/0/resource`),
    blocked(
      'a Patient in nested arrays 50 levels down',
      deep50Array.body,
      'fhir_resource',
      `${deep50Array.pointer}/0/0/0`,
    ),
    // Security round 4 (issue 41, finding 6): UK hospital-number labels and spellings, and a label and
    // its value split across sibling fields.
    blocked('Hosp no with a spaced trust prefix', withDescription('Quote Hosp no RX1 234 5678 on referrals.'), 'mrn', '/description'),
    blocked('Hospital Number with a letter and groups', withTags({ notes: 'Hospital Number - M 123 4567' }), 'mrn', '/policy_tags/notes'),
    blocked('a PAS number', withTags({ notes: 'PAS number: 1234567' }), 'mrn', '/policy_tags/notes'),
    blocked('a case note number', withDescription('Case note number 0012345 was pulled for audit.'), 'mrn', '/description'),
    blocked('a hospital registration number', withTags({ notes: 'hospital reg no 1234567' }), 'mrn', '/policy_tags/notes'),
    blocked('a label item, then its value item', withTags({ fields: [{ label: 'Hospital number' }, { value: 'H1234567' }] }), 'mrn', '/policy_tags/fields/1/value'),
    blocked('a question and its answer', withTags({ form: { question: 'What is your hospital number?', answer: 'H1234567' } }), 'mrn', '/policy_tags/form/answer'),
    blocked('a label above a nested value', withTags({ row: { label: 'Hospital number', value: { text: 'RX1234567' } } }), 'mrn', '/policy_tags/row/value/text'),
    blocked('a label object beside a value object', withTags({ row: { a: { label: 'MRN' }, b: { value: '00482913' } } }), 'mrn', '/policy_tags/row/b/value'),
    blocked('an identifier system naming a hospital number', withTags({ identifier: { system: 'https://fhir.nhs.uk/Id/local-hospital-number', value: 'RX1234567' } }), 'mrn', '/policy_tags/identifier/value'),
  ];

  const deepOrganization = nested(80, {
    resourceType: 'Organization',
    name: 'Northwind NHS Foundation Trust',
  });

  const ordinarySamples: OrdinarySample[] = [
    // Numbers that are times, sizes and counts, even ten digits passing mod-11.
    ordinary(
      'epochs that pass mod-11 under time keys',
      withTags({ issued_at: EPOCH_A, expires_epoch: EPOCH_B, size_bytes: EPOCH_C }),
    ),
    ordinary(
      'a field description with lengths',
      withTags({
        fields: [
          { type: 'ssn', length: 9 },
          { type: 'nhs_number', max_length: 10 },
        ],
      }),
    ),
    ordinary('a label then a small number', withTags({ limits: ['MRN', 16, 'DOB', 10] })),
    ordinary(
      'an impossible date after its label',
      withTags({ identifier: { system: 'dob', value: 20251301 } }),
    ),
    ordinary('a ten-digit number failing mod-11', withTags({ reference: 1234567890 })),
    ordinary('a millisecond timestamp', withTags({ since_ms: 1732752019123, count: 250 })),
    // Arrays of short items that are not identifiers.
    ordinary('ports and versions', withTags({ ports: [443, 8443, 9443], version: ['4', '0', '1'] })),
    ordinary('a numeric scale', withTags({ levels: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] })),
    ordinary('a phone number over items', withTags({ switchboard: ['0113', '243', '3144'] })),
    ordinary('an invalid NHS number over items', withTags({ ref: ['943', '476', '5918'] })),
    ordinary('a date over items', withTags({ released: ['2024', '03', '12'] })),
    // Hospital words without a number.
    ordinary(
      'hospital identifiers named, not given',
      withDescription('Hospital numbers are never stored; the hospital ID format is documented.'),
    ),
    ordinary(
      'hospital no. of beds',
      withDescription('Serves 12 hospitals; the hospital no. of beds is in the annual report.'),
    ),
    ordinary(
      'hospital reference architecture',
      withDescription('Hospital reference architecture v2 (2024).'),
    ),
    ordinary('a hospital count key', withTags({ hospital_count: 12, hospital_name: 'St James' })),
    // URLs with patient words and no identifier.
    ordinary('a FHIR Patient endpoint', withEndpoint({ url: 'https://fhir.example.org/r4/Patient' })),
    ordinary('a FHIR operation URL', withEndpoint({ url: 'https://fhir.example.org/r4/Patient/$match' })),
    ordinary(
      'a FHIR search with a count',
      withEndpoint({ url: 'https://fhir.example.org/r4/Patient?_count=100' }),
    ),
    ordinary('a docs URL about MRNs', withEndpoint({ url: 'https://ehr.example.org/docs/mrn/format' })),
    ordinary(
      'a patient search with a limit',
      withEndpoint({ url: 'https://ehr.example.org/api/v2/patient/search?limit=1000' }),
    ),
    ordinary(
      'a versioned patients API',
      withEndpoint({ url: 'https://ehr.example.org/patients-api/2024/v1' }),
    ),
    // Names and dates that are not a birth.
    ordinary(
      'a reviewer and a review date',
      withTags({ reviewer: 'Jane Doe', reviewed_on: '2025-03-12', born_digital: true }),
    ),
    ordinary('a release label and its date', withTags({ label: 'Release date', value: '2025-03-12' })),
    ordinary('born-digital in prose', withDescription('Born-digital records only; released 2025-03-12.')),
    ordinary('an owner and an updated date', withOwner({ operator: 'Jane Doe', updated: '2025-03-12' })),
    ordinary(
      'a date format named in a field',
      withTags({ field: 'birthDate', type: 'date', example: 'YYYY-MM-DD' }),
    ),
    // Deep structures without patient data.
    ordinary('an Organization 80 levels down', deepOrganization.body),
    // …and their look-alikes (issue 41, finding 6).
    ordinary('a caption with a count', withTags({ form: { question: 'How many hospital numbers per trust?', answer: 'one' } })),
    ordinary('a label item before a format item', withTags({ fields: [{ label: 'Hospital number' }, { format: 'letters and digits' }] })),
    ordinary('an ODS code system', withTags({ identifier: { system: 'https://fhir.nhs.uk/Id/ods-organization-code', value: 'RTH' } })),
    ordinary('a hospital-number field description', withTags({ row: { label: 'Hospital number', value: { max_length: 10, required: true } } })),
    ordinary('a PAS vendor in prose', withDescription('Integrates with the PAS from 2019 onwards; 24 trusts use it.')),
    ordinary('a version beside a label object', withTags({ row: { a: { label: 'Release' }, b: { value: '2025.03.12' } } })),
  ];
  return { blocked: blockedSamples, ordinary: ordinarySamples };
}
