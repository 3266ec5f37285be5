import fc from 'fast-check';
import { agentBody } from './corpus.ts';

/**
 * Legitimate registrations generated from the parts real ones are made of: clinicians with their
 * titles and roles, the conditions a service handles, vendors' service desks and addresses,
 * certification dates, versions, codes, identifiers and figures. None names a patient, so the PHI
 * guard must pass every one of them; the hand-written corpus holds the look-alikes one by one, this
 * holds their combinations.
 */

const GIVEN = ['Jane', 'Peter', 'Aisha', 'Tomasz', 'Mei', 'Oluwaseun', 'Siobhan', 'Rahul', 'Ingrid', 'Carlos'];
const FAMILY = ['Smith', 'Brown', 'Khan', 'Nowak', 'Chen', 'Adeyemi', 'Murphy', 'Patel', 'Larsen', 'Garcia'];
const TITLE = ['Dr', 'Dr.', 'Prof.', 'Professor', 'Mr', 'Ms', 'Nurse', 'Sister'];
const CREDENTIAL = ['FRCP', 'FRCS', 'MBChB', 'MD', 'PhD', 'RN', 'MRCGP'];
const ROLE = [
  'consultant cardiologist',
  'clinical lead',
  'diabetes specialist nurse',
  'consultant in stroke medicine',
  'chief clinical information officer',
  'head of digital',
  'respiratory physiotherapist',
];
const CONDITION = [
  'chest pain',
  'stroke',
  'sepsis',
  'asthma',
  'COPD',
  'type 2 diabetes',
  'heart failure',
  'breast cancer',
  'atrial fibrillation',
  'chronic kidney disease',
  'dementia',
  'HIV',
];
const SERVICE = ['triage', 'referral', 'screening', 'follow-up', 'medication review', 'discharge planning'];
const ORG = [
  'Northwind NHS Foundation Trust',
  'Riverside Health Board',
  'Contoso Health Inc.',
  'St Mary Hospital',
  'Fabrikam Clinical AI',
  'Helse Vest RHF',
];
const DOMAIN = ['northwind.nhs.uk', 'contoso-health.com', 'fabrikam.example.org', 'riverside.scot.nhs.uk'];
const REGION = ['uk-south', 'uk-west', 'eu-north', 'us-east'];
const JURISDICTION = ['GB', 'US', 'NO', 'IE', 'DE', 'NL'];
const SKILL = ['triage.chest-pain', 'triage.stroke', 'consent.verify', 'referral.route', 'screening.breast', 'meds.review'];
const CODE = ['ICD-10 I21.4', 'ICD-10 I63.9', 'SNOMED CT 22298006', 'LOINC 8867-4', 'ICD-10 E11.9'];

const pick = <T>(values: readonly T[]) => fc.constantFrom(...values);
const date = fc
  .date({ min: new Date('2019-01-01'), max: new Date('2030-12-31'), noInvalidDate: true })
  .map((d) => d.toISOString().slice(0, 10));
const version = fc.tuple(fc.nat(30), fc.nat(40), fc.nat(200)).map(([a, b, c]) => `${a}.${b}.${c}`);
const digits = (length: number) => fc.string({ unit: pick([...'0123456789']), minLength: length, maxLength: length });

const clinician = fc
  .tuple(pick(TITLE), pick(GIVEN), pick(FAMILY), pick(CREDENTIAL), pick(ROLE))
  .chain(([title, given, family, credential, role]) =>
    pick([
      `${title} ${given} ${family}, ${role}`,
      `${given} ${family} ${credential}, ${role}`,
      `Clinical lead: ${given} ${family}, ${role}.`,
    ]),
  );

const sentence = fc.oneof(
  fc
    .tuple(pick(SERVICE), pick(CONDITION), pick(CONDITION))
    .map(([service, a, b]) => `Supports ${service} for ${a} and ${b} pathways.`),
  fc
    .tuple(clinician, pick(CONDITION), pick(SERVICE))
    .map(([who, condition, service]) => `${who} oversees the ${condition} ${service} service.`),
  fc
    .tuple(pick(GIVEN), pick(FAMILY), pick(DOMAIN), pick(CONDITION))
    .map(
      ([given, family, domain, condition]) =>
        `Questions about ${condition} integration: ${given} ${family}, ${given.toLowerCase()}.${family.toLowerCase()}@${domain}.`,
    ),
  fc
    .tuple(digits(3), digits(4), pick(CONDITION))
    .map(([a, b, condition]) => `Service desk 0800 ${a} ${b} (${condition} referrals), 8am–6pm.`),
  fc.tuple(pick(ORG), date, date).map(([org, from, to]) => `Certified by ${org} on ${from}; valid until ${to}.`),
  fc.tuple(version, digits(4)).map(([v, build]) => `Runs API v${v}, build ${build}; schema ${v}-rc.1.`),
  fc.tuple(pick(CODE), pick(CODE)).map(([a, b]) => `Covers ${a} and ${b}.`),
  fc
    .tuple(fc.integer({ min: 50, max: 2000 }), fc.integer({ min: 90, max: 99 }))
    .map(([ms, pct]) => `p99 latency ${ms} ms; availability ${pct}.9% monthly.`),
  fc.tuple(pick(ORG), pick(CONDITION)).map(([org, condition]) => `Built with ${org} for adults with ${condition}.`),
  fc
    .tuple(pick(TITLE), pick(FAMILY), pick(CONDITION))
    .map(([title, family, condition]) => `Takes referrals for ${title} ${family}'s ${condition} clinic.`),
  // Shapes a review of the history and "for a person" rules found refused (issue 19, session 9).
  fc
    .tuple(fc.integer({ min: 2, max: 12 }), pick(GIVEN), pick(FAMILY), pick(DOMAIN))
    .map(([n, given, family, domain]) => `Pilot started on ${n} wards; questions to ${given} ${family}, ${given.toLowerCase()}.${family.toLowerCase()}@${domain}.`),
  fc
    .tuple(version, pick(GIVEN), pick(FAMILY), pick(DOMAIN))
    .map(([v, given, family, domain]) => `Release history of the agent: v${v}. Support: ${given} ${family}, ${family.toLowerCase()}@${domain}.`),
  fc
    .tuple(pick(CONDITION), pick(['alerts', 'bookings', 'waiting lists', 'escalations']), pick(GIVEN), pick(FAMILY), pick(['to review', 'to triage', 'in the morning']))
    .map(([condition, what, given, family, tail]) => `${condition} ${what} for ${given} ${family} ${tail}.`),
  fc
    .tuple(pick(CONDITION), pick(GIVEN), pick(FAMILY), fc.integer({ min: 1990, max: 2026 }))
    .map(([condition, given, family, year]) => `Uses the ${condition} method in ${given} ${family} (${year}).`),
  fc
    .tuple(pick(['Admin user', 'Service account', 'Created by user']), pick(GIVEN), pick(FAMILY), pick(CONDITION))
    .map(([label, given, family, condition]) => `${label}: ${given} ${family}; manages the ${condition} alerts.`),
  fc
    .tuple(pick(CODE), pick(['E11.9', 'I10.0', 'J44.1']), pick(GIVEN), pick(FAMILY))
    .map(([a, b, given, family]) => `Handles ${a}; ICD-10 codes ${b} for ${given} ${family}'s team.`),
);

const description = fc
  .array(sentence, { minLength: 1, maxLength: 4 })
  .map((sentences) => sentences.join(' ').slice(0, 1900));

/** One legitimate registration body, valid by the registry's schema, with a unique display name from `index`. */
export const generatedRegistration = fc
  .record({
    org: pick(ORG),
    condition: pick(CONDITION),
    service: pick(SERVICE),
    description,
    domain: pick(DOMAIN),
    region: pick(REGION),
    jurisdiction: pick(JURISDICTION),
    skills: fc.uniqueArray(pick(SKILL), { minLength: 1, maxLength: 4 }),
    port: fc.integer({ min: 1024, max: 65535 }),
    operator: fc.tuple(pick(GIVEN), pick(FAMILY), pick(DOMAIN)),
    concurrency: fc.integer({ min: 1, max: 1000 }),
    rps: fc.integer({ min: 1, max: 500 }),
  })
  .map((g) =>
    agentBody({
      display_name: `${g.org.split(' ')[0]} ${g.condition} ${g.service} agent`,
      jurisdiction: g.jurisdiction,
      description: g.description,
      endpoints: [
        {
          url: `https://agents.${g.domain}:${g.port}/a2a/${g.service.replace(/ /g, '-')}/`,
          protocol: 'mesh-a2a-jsonrpc',
          priority: 10,
          weight: 100,
          health_url: `https://agents.${g.domain}:${g.port}/healthz`,
          region: g.region,
        },
      ],
      capabilities: { protocols: ['mesh-a2a-jsonrpc'], skills: g.skills, features: ['streaming'] },
      owner: {
        org_id: 'ods:RX1',
        org_name: g.org,
        operator: `${g.operator[0].toLowerCase()}.${g.operator[1].toLowerCase()}@${g.operator[2]}`,
      },
      policy_tags: {
        purpose_of_use: ['treatment'],
        phi_allowed: false,
        max_concurrency: g.concurrency,
        rate_limit_rps: g.rps,
      },
    }),
  );
