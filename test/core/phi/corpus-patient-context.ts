/**
 * The patient-context part of the PHI corpus (src/core/phi/patient-context.ts): a person's name, or
 * their contact details, beside a health condition must be refused; the names, contacts and conditions
 * an agent registry legitimately holds (clinicians, publishers, vendors' desks, charities, hospitals,
 * the conditions an agent handles, example utterances) must pass. Spread into BLOCKED and ORDINARY in
 * corpus.ts. Every name and address here is invented.
 */
import type { PhiDetectorName } from '../../../src/core/phi/index.ts';
import type { BlockedSample, OrdinarySample, SampleIn } from './sample.ts';

type Body = Record<string, unknown>;

/** A small schema-valid registration body; `overrides` replace top-level fields. */
function registration(overrides: Body = {}): Body {
  return {
    display_name: 'Northwind Referral Agent',
    jurisdiction: 'GB',
    description: 'Routes referrals to the right service.',
    endpoints: [{ url: 'https://agents.example.org/a2a/v1', protocol: 'mesh-a2a-jsonrpc', priority: 10 }],
    capabilities: { protocols: ['mesh-a2a-jsonrpc'], skills: ['referral.route'] },
    trust: {},
    owner: {
      org_id: 'ods:RX1',
      org_name: 'Northwind NHS Foundation Trust',
      operator: 'ops@nhs-trust.example.org',
    },
    policy_tags: { purpose_of_use: ['treatment'] },
    ...overrides,
  };
}

const description = (text: string): Body => registration({ description: text });
const displayName = (text: string): Body => registration({ display_name: text });
const operator = (text: string): Body => registration({ owner: { org_id: 'ods:RX1', operator: text } });
const tags = (extra: Body): Body =>
  registration({ policy_tags: { purpose_of_use: ['treatment'], ...extra } });
const endpoint = (extra: Body): Body =>
  registration({
    endpoints: [{ url: 'https://agents.example.org/a2a/v1', protocol: 'mesh-a2a-jsonrpc', ...extra }],
  });
/** Skills described the way an A2A agent card describes them (not a registry field: the guard runs before validation). */
const skill = (text: string): Body =>
  registration({ skill_cards: [{ id: 'referral.route', name: 'Route a referral', description: text }] });

const NAME: PhiDetectorName = 'patient_name_condition';
const CONTACT: PhiDetectorName = 'patient_contact_condition';

// prettier-ignore
const blocked = (inWhere: SampleIn, name: string, input: unknown, detector: PhiDetectorName, pointer: string): BlockedSample =>
  ({ name, in: inWhere, input, detector, pointer });
const ordinary = (inWhere: SampleIn, name: string, input: unknown): OrdinarySample => ({
  name,
  in: inWhere,
  input,
});

/**
 * Three held-out rounds: written before the rules saw them, then scanned once (round 1: 28 of 30
 * found, 1 of 40 refused wrongly; round 2: 12 of 15, 0 of 20; round 3: 18 of 20, 0 of 30;
 * docs/security.md), then kept here once the rules were fixed. Spread over free-text fields in turn.
 */
const HELD_OUT_NAMES: readonly string[] = [
  'Patient: Robert Johnson, 72, admitted with pneumonia and sepsis.',
  'Mr Daniel Evans was diagnosed with prostate cancer last spring.',
  'Mrs Patricia Hall – dementia, lives alone, daughter visits.',
  'Follow up Miss Emma Watson re: anorexia, weight 41 kg',
  'pt Karen White c/o chest pain since this morning',
  'Jessica Taylor, 29, pregnant, 12 weeks, gestational diabetes risk',
  'Michael Scott has stage 3 chronic kidney disease and is on dialysis.',
  'Patient Hannah Green – HIV positive, CD4 count 350',
  'Ms Rachel Adams, bipolar disorder, lithium',
  'Laura Martin tested positive for hepatitis B.',
  'Patient Ingrid Larsen presents with severe depression and suicidal thoughts.',
  'I am Thomas Müller and I suffer from migraines.',
  'Mx Sam Jordan - gender clinic, depression',
  'Paul Wilson suffers from schizophrenia',
  'Referral for Mrs Anne Baker (breast cancer, stage 2).',
  'Carlos Fernandez, 54, heart attack 2023, on warfarin',
  'Patient name Daniel Kim dx: T2DM',
  "Mrs O'Brien has COPD and uses home oxygen.",
  'Patient Oliver Bennett (NHS trust ref withheld) has been diagnosed with lymphoma.',
  'Mrs Margaret Thompson, 81, fall at home, fractured hip, dementia.',
  'Escalate: Mr Ian Campbell, chest pain, known angina.',
  'Rebecca Lewis – type 1 diabetes, insulin pump, HbA1c 64',
  'James Murphy was admitted with sepsis on Friday.',
  'patient Rhys Morgan with cystic fibrosis, sweat test positive',
  'Miss Isla Reid, anorexia, admitted to ward 3',
  'Mohammed Khan tested positive for COVID-19 on admission.',
  "Dear team, Mrs Evans (Linda) has been diagnosed with Alzheimer's.",
  'Pt: Ewan Stewart, overdose, self-harm history',
  'Urgent: Mrs Joanne Price, breathless, known heart failure, please call back.',
  'Simon Hughes (67) has advanced lung cancer and is on palliative care.',
  'patient Priya Sharma, 34, postnatal depression, on sertraline',
  'Admission note: Mr Colin Ward admitted with pneumonia.',
  'Fiona Grant was treated for anorexia in 2019.',
  'Hi, my name is Daniel Price and I was diagnosed with epilepsy last year.',
  'Ms Lucy Evans: HIV positive since 2015, viral load undetectable.',
  'Emma Hughes, 41, type 2 diabetes, HbA1c 72, on metformin',
  'Mr Wojciech Nowak – alcohol dependence, detox planned',
  'Patient: Amelia Scott; Dx: leukaemia',
  'Pt Nicholas Reed, suicidal, seen by crisis team',
  'Matthew Lee tested positive for syphilis.',
  'Kate Morris – miscarriage at 10 weeks, follow-up with EPU',
  "Mr Dafydd Roberts, Parkinson's, falls",
  'Hannah Price is pregnant with twins.',
];
const HELD_OUT_CONTACTS: readonly string[] = [
  'Name: George Harris. Condition: COPD. Contact: george.harris@gmail.com',
  'Please call Susan Clarke on 07911 123456 about her biopsy results.',
  'Send Kevin Walker (kevin.walker82@hotmail.com) his HIV test results.',
  'Member number 55501234 - Emily Turner - asthma, eczema',
  'Subscriber ID W987654321, Mr Brian Lewis, type 2 diabetes',
  'Email lucy.hill@yahoo.com about her miscarriage follow-up',
  'Contact Ahmed Ali on +44 7700 900111 regarding his epilepsy medication',
  'Mr Giovanni Rossi, giovanni.rossi@libero.it, melanoma',
  'Jane Cooper: HIV positive, PrEP declined, call 07700 900222',
  'Policy no. ABX-20019876, Sophia Lopez, pregnant',
  'Maria Santos (maria.santos@gmail.com) - breast cancer survivor',
  'Call Mr Andrew Young 0113 496 0123 re his stroke rehab',
  'Contact Olivia Wood, olivia.wood@icloud.com, re: her pregnancy scan',
  'Text Jack Roberts on 07123 456789 about his chemotherapy schedule',
  'Member ID: HMO44556677 Chloe Walker depression',
  'Sophie Clark suffering from postnatal depression – call 07700 900333',
  'ann.smith@btinternet.com – her HIV viral load is undetectable',
  'Call Gareth Jones on 07700 900555 to discuss his prostate cancer biopsy.',
  'Contact Amanda Reid at amanda.reid@hotmail.co.uk regarding her chlamydia result.',
  'Subscriber no 77123456, Karen Moss, COPD',
  'Martin Shaw <martin.shaw@gmail.com> has multiple sclerosis.',
  'Ask Mrs Brenda Hall (brenda.hall@yahoo.com) about her dementia assessment.',
];
const HELD_OUT_ORDINARY: readonly string[] = [
  'Dr Robert Johnson, consultant oncologist, Leeds Teaching Hospitals.',
  'Prof. Emma Watson leads the dementia research group.',
  'Built by Daniel Evans and the Northwind team for diabetes care.',
  'Contact Karen White (karen.white@northwind.nhs.uk) for COPD pathway onboarding.',
  'Michael Scott, CTO, michael.scott@contoso.com',
  'Reviewed by Hannah Green, RN, for sepsis screening safety.',
  'Supports the Royal Marsden and The Christie for cancer referrals.',
  'Queen Elizabeth University Hospital stroke unit integration.',
  'Handles HIV, hepatitis B and hepatitis C testing requests.',
  'For adults with type 2 diabetes who use insulin pumps.',
  'Covers pregnancy, miscarriage and early pregnancy unit referrals.',
  'Service desk: 0300 123 4567 for asthma nurse bookings.',
  'Telephone 0113 496 0000 for heart failure team questions.',
  'Email support@asthma-app.example.com for help.',
  'George Harris Medical Centre: diabetes clinics on Mondays.',
  'Sarah Cannon Research Institute oncology trials matching.',
  'Jane Cooper is our product owner; the app covers asthma and COPD.',
  'Questions? Paul Wilson, paul.wilson@vendor.example.com',
  'The Dr Anne Baker memorial lecture on cancer care.',
  'Example message: "My dad has dementia, what support is there?"',
  'Sample: "I was diagnosed with diabetes last year, what should I eat?"',
  'Trained on synthetic cases of sepsis, stroke and heart attack.',
  'Depression and anxiety self-referral for adults in Leeds.',
  'ICD-10 coding assistant: F32.1, E11.9, J44.1.',
  'Patient Reported Outcome Measures for hip arthritis.',
  'Patient Advice and Liaison Service; not for urgent cancer queries.',
  'Laura Martin, Head of Clinical Safety, laura.martin@northwind.example.org',
  'Maintained by Thomas Müller (thomas.mueller@contoso.de).',
  'Carlos Fernandez and Maria Santos designed the HIV PrEP reminder flow.',
  'Cystic Fibrosis Trust approved content.',
  'Version 2 adds epilepsy seizure diaries and migraine tracking.',
  'Welcome! I am Ada, your virtual GP for coughs and colds.',
  "Named for Elizabeth Garrett Anderson; women's health triage.",
  'Ring the diabetes team on 0113 496 0456.',
  'Owner: Emily Turner; escalation: emily.turner@gmail.com',
  'Member ID lookup for insurers; no diabetes data stored.',
  "Mr Smith's knee replacement list and Ms Jones's breast clinic.",
  'Peter Kim, MD – cardiology AI lead; heart failure and AF.',
  'Patient Zero Analytics: sepsis early warning.',
  'John Lewis Partnership staff health: asthma clinics.',
  'Oncology triage agent by Northwind; clinical owner Dr Oliver Bennett.',
  'Contact Rebecca Lewis, Product Manager, for the type 1 diabetes integration.',
  'James Murphy (Clinical Safety Officer) signs off every sepsis release.',
  'Our team: Jack Roberts (engineering), Chloe Walker (design), Ewan Stewart (clinical).',
  'Manages insulin pump data for people with type 1 diabetes.',
  'Supports the NHS Diabetes Prevention Programme.',
  'Detects sepsis early using NEWS2; alerts the outreach team.',
  'Mohammed Khan Medical Centre – asthma reviews.',
  'The Sophie Clark Foundation funds postnatal depression research.',
  'Contact olivia.wood@northwind.example.org for pregnancy app partnerships.',
  'For help call 0800 800 8000 (cancer helpline).',
  'Used by GPs to refer patients with suspected cancer (2WW).',
  'Isla Reid, Clinical Director, Mental Health Services.',
  'Mrs Evans Bakery is not a health provider (sample negative).',
  'Supports Welsh: "Mae gen i asthma" means I have asthma.',
  'Ian Campbell and Margaret Thompson wrote the dementia guidance.',
  'An overdose risk calculator for paracetamol, used by A&E clinicians.',
  'Pregnancy and maternity triage for midwives; contact maternity@northwind.example.org.',
  'Demo persona "Alex, 34, with asthma" is fictional.',
  'Stroke thrombolysis decision support (Dr Rhys Morgan, stroke physician).',
  'Joanne Price, Chief Nursing Information Officer, sponsors the heart failure work.',
  'Simon Hughes leads the lung cancer screening programme (simon.hughes@nhs.example.org).',
  'Dr Priya Sharma, perinatal psychiatrist, advised on postnatal depression content.',
  'Colin Ward Ltd supplies pneumonia vaccination scheduling.',
  'Talk to Fiona Grant about onboarding to the eating disorder service.',
  'Gareth Jones Physiotherapy: back pain and arthritis rehab.',
  'Amanda Reid (product) and Daniel Price (engineering) built this HIV testing reminder.',
  'Ms Lucy Evans, consultant in sexual health and HIV.',
  'Ask about our diabetes prevention programme: 0808 123 4567.',
  'Supports Mr and Mrs categories for salutations in letters about asthma clinics.',
  'Wojciech Nowak, DPhil, alcohol harm researcher.',
  'Karen Moss Centre for COPD rehabilitation.',
  'Martin Shaw maintains the multiple sclerosis symptom tracker.',
  'Patient: adult or child; condition: asthma or COPD.',
  'Brenda Hall memory clinic, dementia assessments by referral.',
  'Crisis team escalation for suicidal patients; call 0800 689 5652.',
  'Matthew Lee, CTO of Contoso Health, matthew.lee@contoso.com.',
  'Early pregnancy unit (EPU) booking agent; miscarriage support signposting.',
  "Parkinson's nurse specialist service, Cardiff.",
  'Twins and multiple pregnancy clinic scheduling.',
  'Helen Price Trust: children with cancer.',
  'Named contact: Emma Hughes. Scope: type 2 diabetes structured education.',
  'Reviewed by the Caldicott Guardian, Jane Moss, for HIV data flows.',
  'Alerts the sepsis team; escalation contact sepsis-team@northwind.example.org.',
  "Don't Miss Your Smear Test - cervical cancer screening reminders",
  'Patient Safety Incident Reporting for stroke units.',
  "Mr Smith's cataract list, Tuesday mornings.",
  'For carers of people with dementia in Wales.',
  'Sample record: "Patient: [redacted], condition: asthma" is rejected by design.',
  'Built with input from Diabetes UK volunteers.',
];

// prettier-ignore
/**
 * Round 4 (2026-11-26): written blind by a helper who had not read the rules or the corpus: 40 PHI,
 * 60 legitimate. Scanned once as written: 25 of 40 found, 0 of 60 refused. After the fixes it
 * prompted (history and treatment phrases before a condition, a finding said "for" a person, a quoted
 * name label, weeks of pregnancy), and after a review narrowed them (they refused ordinary contact
 * lines and staff named after "alerts for"), 31 of 40. Those 31 are below; the 9 still missed:
 * - Schizophrenia relapse noted for Mark O'Brien (a given name the list lacks as a name: "Mark")
 * - María García's HbA1c came back at 9.2% … her insulin (a lab and a drug outside the lexicon)
 * - user Emily Carter told the bot she is pregnant … ("user" names accounts more often than people)
 * - three in French, Dutch and Italian, which the rules do not read
 * - Insurance member number: BCBS 7734-992-118 for Anna Schmidt (a member id with letters first)
 * - Autism and ADHD assessment completed for 8-year-old Noah Patel (an assessment reads as a service)
 * - Ewa Nowak (SSN 987-65-4321) was treated for a broken hip (an SSN in the advertising range,
 *   deliberately not one, and a given name the list lacks)
 * These measure the rules as they were; they are no longer held out.
 */
const ROUND_4_BLOCKED: ReadonlyArray<readonly [string, PhiDetectorName]> = [
  ["Pt John Smith, 54M, dx type 2 diabetes, started metformin 500mg BD.", 'patient_name_condition'],
  ["Referral: Mrs Eleanor Whitfield (DOB 12/03/1961) has a history of breast cancer and is now presenting with lower back pain.", 'date_of_birth'],
  ["Hi team, just FYI Sarah Connolly tested positive for HIV last week, please be discreet.", 'patient_name_condition'],
  ["Test fixture: { name: 'Priya Raman', diagnosis: 'major depressive disorder', medication: 'sertraline 100mg' }", 'patient_name_condition'],
  ["Notes: Klaus Müller, 67, hx of COPD and atrial fibrillation, on apixaban.", 'patient_name_condition'],
  ["Dear Dr Patel, thank you for seeing Thomas Reid, who was diagnosed with early-onset Alzheimer's disease in March.", 'patient_name_condition'],
  ["Contact jenny.lowe84@gmail.com (Jenny Lowe) re her chemotherapy schedule for ovarian cancer.", 'patient_contact_condition'],
  ["Patient Ahmed Khan, mobile 07700 900123, awaiting results of his colonoscopy for suspected bowel cancer.", 'patient_name_condition'],
  ["Member ID UHC-88421937 (Robert Chen) - claim for bipolar disorder inpatient stay approved.", 'mrn'],
  ["NHS number 943 476 5919 - patient admitted with sepsis.", 'uk_nhs_number'],
  ["SSN: 123-45-6789, diagnosis: chronic kidney disease stage 4.", 'us_ssn'],
  ["MRN: 00482913 Lisa Brown, post-op day 2 after appendectomy, pain well controlled.", 'mrn'],
  ["Date of birth: 04/11/1978, name: Daniel Okafor, condition: epilepsy, on levetiracetam.", 'date_of_birth'],
  ["Cirrhosis secondary to alcohol use — patient is Brendan Walsh, 58.", 'patient_name_condition'],
  ["Pt: Olivia Martinez. Dx: anorexia nervosa. Plan: refer to eating disorder unit.", 'patient_name_condition'],
  ["Can you reschedule Michael Thompson's dialysis session? His kidneys are worse this week.", 'patient_name_condition'],
  ["Grace Adeyemi (grace.adeyemi@hotmail.co.uk) - positive chlamydia screen, treatment sent.", 'patient_contact_condition'],
  ["Hep C viral load undetectable for Peter Kowalski after 12 weeks of sofosbuvir.", 'patient_name_condition'],
  ["Description: demo agent. Example record: Harriet Jones, 72, Parkinson's disease, falls risk.", 'patient_name_condition'],
  ["Mr. David Levi was started on chemotherapy for his non-Hodgkin lymphoma on 3 Feb.", 'patient_name_condition'],
  ["Karen Hughes is recovering from a heroin overdose and is enrolled in our methadone programme.", 'patient_name_condition'],
  ["Operator note: William Scott's biopsy confirmed malignant melanoma; oncology informed.", 'patient_name_condition'],
  ["Lucy Fernández - 34 weeks pregnant, pre-eclampsia, BP 160/110, admitted to labour ward.", 'patient_name_condition'],
  ["Chronic migraine and PTSD — both diagnosed in veteran James Miller, age 39.", 'patient_name_condition'],
  ["NHS No. 4010232137 Margaret Evans has dementia and lives alone.", 'uk_nhs_number'],
  ["Medical record number 5589201: Aisha Rahman, sickle cell crisis, IV morphine.", 'mrn'],
  ["DOB 1990-07-15, Kevin Nguyen, suicidal ideation, placed on 1:1 observation.", 'date_of_birth'],
  ["Ref from GP re Mrs Patricia Bell: new diagnosis of rheumatoid arthritis, please advise on methotrexate.", 'patient_name_condition'],
  ["ping 07911 123456 (Chloe Taylor) to remind her to take her antiretrovirals", 'patient_contact_condition'],
  ["Hannah Wilson's mammogram showed a suspicious mass in the left breast.", 'patient_name_condition'],
  ["The patient, Ian Campbell, has stage 3 prostate cancer and elevated PSA of 45.", 'patient_name_condition'],
];

// prettier-ignore
const ROUND_4_ORDINARY: readonly string[] = [
  "Dr Sarah Mitchell, Consultant Cardiologist, leads the heart failure pathway this agent supports.",
  "Handles triage for asthma, COPD and type 2 diabetes queries. Escalates to the on-call GP.",
  "Vendor contact: James Porter, Account Manager, james.porter@medisoft-solutions.com, for the oncology scheduling bot.",
  "Deployed at Great Ormond Street Hospital for Children to answer appointment questions.",
  "Service desk: 0800 123 4567 (Mon-Fri 9-5) for support with the dementia care assistant.",
  "Supports the Royal Marsden breast cancer clinic's booking workflow.",
  "Covers ICD-10 codes E11.9, I50.9, J44.1 and F32.1 for coding assistance.",
  "Release notes v2.3.1: improved detection of sepsis keywords; fixed HbA1c unit conversion.",
  "Certified under DCB0129 on 2024-03-15; clinical safety officer: Dr Anil Mehta.",
  "Example utterance: 'I've been diagnosed with diabetes, what should I eat?'",
  "Display name: Parkinson's Disease Companion",
  "Built with Macmillan Cancer Support to signpost people affected by cancer to local services.",
  "Research programme led by Professor Helen Clarke investigating early markers of Alzheimer's disease.",
  "Operator: St Thomas' Hospital NHS Foundation Trust, Digital Services.",
  "Agent answers FAQs about HIV PrEP eligibility and clinic opening hours.",
  "Owner: Mark Stevens (Product Owner), mark.stevens@nhs.net. Use case: depression self-help signposting.",
  "Model version 4.1.0-rc2, build 20240611.3, last evaluated 2024-06-12.",
  "Mental health crisis line: call 111 and select option 2, or text SHOUT to 85258.",
  "Clinical lead Dr. Emma Johnson, Consultant Psychiatrist, reviewed the suicide risk escalation prompts.",
  "Supports the Christie NHS Foundation Trust chemotherapy day unit with rota queries.",
  "Intended for patients with chronic kidney disease stage 3-5 awaiting dialysis education.",
  "Contact our clinical safety team at clinicalsafety@healthbot.io or +44 20 7946 0000.",
  "Mayo Clinic guidelines are used as the reference for migraine triage content.",
  "Notes: retrained on de-identified discharge summaries; no patient identifiers retained.",
  "Example prompt: 'My son has asthma and uses a blue inhaler, is that normal?'",
  "Partner: Alzheimer's Society. Agent helps carers find respite services.",
  "Dr Rajesh Kumar (GP partner) and Nurse Practitioner Claire Doyle approved the hypertension protocol.",
  "Handles referrals for suspected skin cancer under the two-week-wait pathway.",
  "Maintainer: Tom Baker <tom.baker@acme-health.com>; escalation for epilepsy seizure-diary bot.",
  "Test data only: synthetic patients generated by Synthea; no real individuals.",
  "SNOMED CT concepts covered: 44054006 (Diabetes mellitus type 2), 195967001 (Asthma).",
  "Named after Florence Nightingale; the Nightingale Assistant supports nursing handover.",
  "Helpdesk hours 08:00-18:00. Ticket reference format: INC-0012345.",
  "The agent was approved by the Caldicott Guardian, Dr Susan Reeves, on 1 May 2024.",
  "Addenbrooke's Hospital stroke unit uses this agent for thrombolysis checklist reminders.",
  "Provides information on Crohn's disease, ulcerative colitis and IBS diet plans.",
  "Sponsor: Wellcome Trust grant 219876/Z/19/Z. PI: Prof. David Hughes, Oncology.",
  "Do not enter patient names, NHS numbers or dates of birth into this agent.",
  "Product: MedAssist Pro 3.0 for Cerner Millennium. Supports ED triage for chest pain.",
  "Contact: Jane Wright, Customer Success, mobile 07700 900456, for the diabetic retinopathy screening bot.",
  "Speciality: oncology, haematology, palliative care. Region: North West London.",
  "St George's University Hospitals sickle cell service uses this agent for transfusion reminders.",
  "Trained on NICE guideline NG28 (type 2 diabetes in adults) and NG136 (hypertension).",
  "Ask about: vaccination schedules, flu jabs, COVID-19 boosters, shingles vaccine eligibility.",
  "Dr. Michael Chen, MD, Endocrinologist at Johns Hopkins, is the medical advisor for the insulin titration assistant.",
  "Example conversation: User: 'I feel really anxious lately.' Agent: 'I'm sorry to hear that. Would you like some breathing exercises?'",
  "Integrates with the Michael J. Fox Foundation's Parkinson's research registry API.",
  "The Down Syndrome Association helpline is 0333 1212 300.",
  "Changelog 2024-09-02: added Welsh language support for the cervical screening reminder flow.",
  "Escalation contact: Duty Manager, St Bartholomew's Hospital, ext. 4421.",
  "Counts of HIV diagnoses per region are reported monthly in aggregate only (n<5 suppressed).",
  "Owner team: Tobias Fischer, Head of Digital Health, Charité Berlin.",
  "Supports Ronald McDonald House families with accommodation bookings near the children's hospital.",
  "Intended users: nurses on the Lister ward managing post-operative pain.",
  "Eligibility: adults aged 40-74 for the NHS Health Check; excludes people with existing heart disease.",
  "Dr Amira Haddad, Consultant Neurologist, and Dr Ben Foster, Registrar, run the MS clinic this agent books for.",
  "Pilot site: Moorfields Eye Hospital glaucoma clinic. Go-live date: 2024-11-04.",
  "Supports the Terrence Higgins Trust sexual health booking line.",
  "Validation: sensitivity 0.94 for detecting depression severity (PHQ-9 >= 10) on test set.",
  "Data protection officer: Laura Green, dpo@carecompanion.org, 020 7946 0123.",
];

/** The free-text places a held-out sample goes, in turn, with the pointer each gives. */
const FIELDS: ReadonlyArray<readonly [(text: string) => Body, string]> = [
  [description, '/description'],
  [operator, '/owner/operator'],
  [(text) => tags({ notes: text }), '/policy_tags/notes'],
  [skill, '/skill_cards/0/description'],
];
const field = (i: number) => FIELDS[i % FIELDS.length] as (typeof FIELDS)[number];
const heldOut = (texts: readonly string[], detector: PhiDetectorName): BlockedSample[] =>
  texts.map((text, i) =>
    blocked('body', `held out: ${text.slice(0, 50)}`, field(i)[0](text), detector, field(i)[1]),
  );

// prettier-ignore
export const PATIENT_CONTEXT_BLOCKED: readonly BlockedSample[] = [
  // A patient's name with a condition.
  blocked('body', 'a patient word, a name and a diagnosis', description('Patient John Smith, diagnosed with type 2 diabetes.'), NAME, '/description'),
  blocked('body', 'Mrs, a name and a result', description('Mrs. Jane Doe (DOB unknown) – HIV positive, follow-up.'), NAME, '/description'),
  blocked('body', 'a display name for one patient', displayName('Follow-up for Mr Ahmed Khan – COPD exacerbation'), NAME, '/display_name'),
  blocked('body', 'pt and a presentation', description('Escalation: pt Maria Garcia presented with chest pain and a history of angina.'), NAME, '/description'),
  blocked('body', 'a given name and surname as the subject of a diagnosis', description("Peter Brown, 67, was recently diagnosed with Parkinson's disease."), NAME, '/description'),
  blocked('body', 'Ms and a surname alone', operator('Ms Okafor - schizophrenia, inpatient since March'), NAME, '/owner/operator'),
  blocked('body', 'a name that has a condition', tags({ notes: 'Sarah Connor has breast cancer (stage 2)' }), NAME, '/policy_tags/notes'),
  blocked('body', 'a patient with an ICD-10 code', description('Test record: patient Chidi Okafor, E11.9, on metformin.'), NAME, '/description'),
  blocked('body', 'a skill described for one patient', skill('Used for Mr David Jones who suffers from epilepsy.'), NAME, '/skill_cards/0/description'),
  blocked('body', 'a percent-encoded patient in an endpoint URL', endpoint({ url: 'https://agents.example.org/a2a/v1?note=Patient%20Emily%20Clark%20HIV%20positive' }), NAME, '/endpoints/0/url'),
  blocked('body', 'a patient label and a diagnosis label', description('Patient name: Oliver Hughes; diagnosis: type 1 diabetes'), NAME, '/description'),
  blocked('body', 'Pt: with an initial', description('Pt: J. Smith, tested positive for chlamydia.'), NAME, '/description'),
  blocked('body', 'Ms, a name, pregnant', displayName('Ms Fatima Hussain – pregnant, gestational diabetes'), NAME, '/display_name'),
  blocked('body', 'a note to a GP naming a patient', description('Note for GP: Mr Kwame Mensah suffering from depression after discharge.'), NAME, '/description'),
  blocked('body', 'the condition before the name', description('Pregnant: Mrs Amy Wood, 32 weeks, booked for review.'), NAME, '/description'),
  blocked('body', 'my name is', tags({ example: 'My name is Sophie Turner and I have epilepsy.' }), NAME, '/policy_tags/example'),
  blocked('body', 'a patient in JSON inside a string', tags({ raw: JSON.stringify({ note: 'Patient Anna Schmidt, multiple sclerosis' }) }), NAME, '/policy_tags/raw'),
  blocked('body', 'a patient in base64', tags({ blob: Buffer.from('Patient Lucy Brown, diagnosed with diabetes (E11.9)').toString('base64') }), NAME, '/policy_tags/blob'),
  blocked('body', 'a patient behind HTML entities', description('Mrs&nbsp;Jane&nbsp;Doe &ndash; HIV positive'), NAME, '/description'),
  blocked('body', 'a possessive name and a condition', description("Reminder: Thomas Wright's leukaemia relapse, seen Monday."), NAME, '/description'),
  blocked('body', 'a name, a dash and a diagnosis', operator('Linda Evans – bipolar disorder, lithium level due'), NAME, '/owner/operator'),
  blocked('body', 'a French given name and a condition', description('Nathalie Dubois, 45 ans, has epilepsy and a seizure diary.'), NAME, '/description'),
  blocked('body', 'Mr and a name in a list of items', tags({ items: ['triage', 'Mr Lars Nilsson, suspected stroke, FAST positive'] }), NAME, '/policy_tags/items/1'),
  blocked('body', 'a name as an object key with a condition', tags({ 'Patient Omar Hassan – tuberculosis': true }), NAME, '/policy_tags'),
  blocked('query', 'a patient in a search query', { q: 'patient Tom Baker diagnosed with dementia' }, NAME, '/query/q'),
  blocked('query', 'Mrs and a condition in a query parameter', { display_name: 'Mrs Linda Evans – bipolar' }, NAME, '/query/display_name'),
  blocked('header', 'a patient in a request id', { 'x-request-id': 'Patient James Wilson, asthma' }, NAME, '/x-request-id'),
  blocked('header', 'a diagnosis in a caller-chosen header', { 'x-case-note': 'Mr Robert Taylor diagnosed with lung cancer' }, NAME, '/x-case-note'),
  // A person's contact details beside their name and a condition.
  blocked('body', 'a name, a personal address and her results', description('Contact Mary Jones at mary.jones@gmail.com re her breast cancer results'), CONTACT, '/description'),
  blocked('body', 'a member id, a name and a condition', description('Member ID XKJ123456789, Peter Brown, asthma'), CONTACT, '/description'),
  blocked('body', 'a mobile number and his condition', operator('Call Peter Brown on 07700 900123 about his asthma review'), CONTACT, '/owner/operator'),
  blocked('body', 'Mrs, a personal address and a result', description('Mrs Sarah Lee, sarah.lee1975@yahoo.co.uk, HIV positive'), CONTACT, '/description'),
  blocked('body', 'an address that spells a name and her results', description('Email jane.doe@hotmail.com about her chlamydia test results'), CONTACT, '/description'),
  blocked('body', 'a name, a webmail address and a condition in a health URL', endpoint({ health_url: 'https://agents.example.org/h?contact=amy.wood%40gmail.com&note=Amy%20Wood%20pregnant', }), CONTACT, '/endpoints/0/health_url'),
  blocked('body', 'a display name with an address and a result', displayName('Peter Brown (peter.b@gmail.com) – HIV positive'), CONTACT, '/display_name'),
  blocked('body', 'a policy number, Mrs and a condition', tags({ contact: 'Policy number PN-55812345 - Mrs Eva Novak - asthma' }), CONTACT, '/policy_tags/contact'),
  blocked('body', 'a skill with a phone number and her condition', skill('Ring Mrs Okafor on +44 7700 900789 about her diabetes.'), CONTACT, '/skill_cards/0/description'),
  blocked('body', 'an address in angle brackets and a positive test', description('Chidi Okafor <chidi.okafor@gmail.com> tested positive for tuberculosis'), CONTACT, '/description'),
  blocked('body', 'an insurance id, Mr and a condition', description('Insurance ID 884512377, Mr Lee, hepatitis C'), CONTACT, '/description'),
  blocked('body', 'a French mobile and her follow-up', description('Reach Sophie Martin on 06 12 34 56 78 for her depression follow-up.'), CONTACT, '/description'),
  blocked('body', 'an international mobile and his viral load', description('WhatsApp Ravi Patel +91 98765 43210 regarding his HIV viral load.'), CONTACT, '/description'),
  blocked('body', 'an address and her results in JSON inside a string', tags({ raw: JSON.stringify({ note: 'jane.roe@gmail.com re her HIV results' }) }), CONTACT, '/policy_tags/raw'),
  blocked('body', 'a contact behind HTML entities', description('Contact Mary&nbsp;Jones &lt;mary.jones@gmail.com&gt; re her lupus flare'), CONTACT, '/description'),
  blocked('body', 'a name and a webmail address beside a condition', operator('Anna Kowalski, anna.kowalski@outlook.com, COPD'), CONTACT, '/owner/operator'),
  blocked('query', 'a name, an address and a condition in a query', { contact: 'Mr Paul Green, paul.green@outlook.com, prostate cancer' }, CONTACT, '/query/contact'),
  blocked('query', 'a member id and a name in a repeated parameter', { note: ['ok', 'member no 99812345 Helen Price diabetic'] }, CONTACT, '/query/note/1'),
  blocked('header', 'a callback header with a phone number and his condition', { 'x-callback': 'Peter Brown 07700 900456 re his COPD' }, CONTACT, '/x-callback'),
  blocked('header', 'a member id header', { 'x-note': 'Member ID ABC12345678 Jane Roe diabetes' }, CONTACT, '/x-note'),
  blocked('body', 'a department before "patient" is no clinician role', description('Mr Lee, cardiology patient, heart failure'), NAME, '/description'),
  blocked('query', 'a self-introduction with a condition', { message: "I'm Peter Brown and I have asthma" }, NAME, '/query/message'),
  // Found while generating legitimate records: a code at the end of a sentence was not read as one.
  blocked('body', 'Mr, a name and an ICD-10 code ending a sentence', description('Mr John Smith, admitted with I21.4.'), NAME, '/description'),
  blocked('body', 'a webmail address beside an unlabelled code', operator('Jane Smith, jane.smith@gmail.com: E11.9.'), CONTACT, '/owner/operator'),
  blocked('body', 'a patient and codes named by their code system', description('Patient John Smith: ICD-10 I21.4 and I63.9.'), NAME, '/description'),
  ...heldOut(HELD_OUT_NAMES, NAME),
  ...heldOut(HELD_OUT_CONTACTS, CONTACT),
  // Found by the review of round 4's fixes: what they missed.
  blocked('body', 'a name, a positive result and a referral', description('John Smith HIV positive referral to GUM'), NAME, '/description'),
  blocked('body', 'Mr, a result and a clinic appointment', description('Mr Peter Brown HIV result clinic appointment Tuesday'), NAME, '/description'),
  blocked('body', 'Mrs and a code named by its code system in one clause', description('Mrs Jones — ICD-10 F20.0'), NAME, '/description'),
  ...ROUND_4_BLOCKED.map(([text, detector], i) =>
    blocked('body', `round 4: ${text.slice(0, 50)}`, field(i)[0](text), detector, field(i)[1]),
  ),
];

// prettier-ignore
export const PATIENT_CONTEXT_ORDINARY: readonly OrdinarySample[] = [
  // Clinicians: titles, credentials, roles and their clinics.
  ...[
    "Dr. Smith's cardiology triage agent",
    'Dr Jane Smith, consultant diabetologist, leads the diabetes pathway.',
    'Prof. Peter Brown (MD, PhD) oversees the oncology model for lung cancer.',
    "Mr Patel's orthopaedic fracture clinic referrals.",
    'Mr Ahmed Khan FRCS, consultant colorectal surgeon – bowel cancer pathway.',
    'Ms Okafor, breast surgeon, runs the breast cancer screening service.',
    'Nurse Sarah Lee (asthma specialist) answers COPD queries.',
    'Sister Mary Jones runs the diabetes education programme.',
    'Clinical lead: Jane Smith, consultant in HIV medicine.',
    'Reviewed by Peter Brown, MBChB, for stroke triage accuracy.',
    'Jane Smith, diabetes specialist nurse, reviews every referral.',
    'Peter Brown leads the asthma research programme at Leeds.',
    "Sarah Lee's team builds the HIV prevention app.",
    "Dr Emily Clark's heart failure clinic, Tuesdays and Thursdays.",
    'Chest pain triage by Peter Brown, FRCP, and Mary Jones, RN.',
    'Jane Smith (Head of Digital) – diabetes programme.',
    'Jane Smith and Peter Brown built the COPD model.',
    "Founded by John Smith after his father's stroke.",
    "Mr Patel's breast cancer clinic takes referrals from GPs.",
  ].map((text) => ordinary('body', `clinicians: ${text.slice(0, 50)}`, description(text))),
  // Vendors, publishers and service desks with conditions in scope.
  ...[
    'Contact support@vendor.com for diabetes integration questions.',
    'Questions about diabetes referrals: Jane Smith, jane.smith@northwind.nhs.uk',
    'Contact Jane Smith (jane.smith@vendor.com) about the breast cancer screening integration.',
    'Service desk 0800 123 4567 (asthma and COPD referrals), 8am–6pm.',
    'Out of hours: call the on-call team on +44 20 7946 0958 for sepsis alerts.',
    'Maintainer: Peter Brown <peter.brown@contoso-health.com>. Handles asthma and COPD referrals.',
    'Publisher: Mary Jones; contact mary.jones@vendor.com. Cancer pathway navigation.',
    'Contact: Mary Jones, mary.jones@gmail.com – questions about our asthma app welcome.',
    'Member services: 0800 555 0199 for asthma plan questions.',
    'Insurance member ID format: three letters and nine digits; checked before diabetes referrals.',
    'Call 111 for urgent symptoms; 999 for chest pain or stroke.',
    'Email referrals@northwind.example.org with the COPD referral form; we reply within a day.',
  ].map((text) => ordinary('body', `vendors: ${text.slice(0, 50)}`, description(text))),
  // Organisations, charities and hospitals named after people.
  ...[
    'Built by the Mayo Clinic oncology team.',
    'In partnership with Marie Curie and Macmillan Cancer Support for end-of-life cancer care.',
    'Developed with Diabetes UK, Asthma + Lung UK and the Stroke Association.',
    "Deployed at St Mary's Hospital and Queen Elizabeth Hospital, Birmingham, for sepsis screening.",
    'John Radcliffe Hospital diabetes centre, Oxford.',
    'Piloted at James Cook University Hospital for heart failure referrals.',
    'Anthony Nolan stem cell register for leukaemia patients.',
    'Terrence Higgins Trust sexual health and HIV testing service.',
    "Sue Ryder neurological care; Parkinson's UK approved.",
    'Great Ormond Street Hospital paediatric epilepsy surgery programme.',
    'Run by the John Smith Foundation for cancer research.',
    'Mary Seacole programme graduates run the sickle cell service.',
    "Alzheimer's Society and Parkinson's UK partner agent.",
    'Named after Florence Nightingale; for nurses managing sepsis.',
  ].map((text) => ordinary('body', `organisations: ${text.slice(0, 50)}`, description(text))),
  // Conditions without a person, and example wording.
  ...[
    'Handles diabetes, asthma and COPD referrals.',
    'For people living with HIV and hepatitis C.',
    'Supports patients diagnosed with type 2 diabetes to manage their HbA1c.',
    'Triage for chest pain, stroke and sepsis; escalates to a clinician.',
    'Covers ICD-10 E11.9, I10 and J45.909 for coding support.',
    'Breast cancer screening reminders for women aged 50 to 71.',
    "Example utterance: 'the patient has asthma and a cough'.",
    "Example: 'I have had chest pain for two days'.",
    'Patient-facing symptom checker; not for people with suspected stroke.',
    "Answers 'does my child have asthma?' questions with NHS guidance.",
    'Persona for testing: a 67-year-old with COPD (no name).',
    "Greets patients with: 'Hi, I'm Sarah Lee, your asthma nurse.'",
    'Thanks to John Smith and Mary Jones for testing.',
  ].map((text) => ordinary('body', `conditions: ${text.slice(0, 50)}`, description(text))),
  // Other fields.
  ordinary('body', 'a display name starting with Patient', displayName('Patient Summary Agent for diabetes and CKD')),
  ordinary('body', 'a navigator display name', displayName('Patient Navigator for cancer care')),
  ordinary('body', 'a Title Case campaign name', displayName('Never Miss Another Dose: insulin reminders')),
  ordinary('body', 'a given name in a product name', displayName("Sophie's Diabetes Diary")),
  ordinary('body', 'a Teams channel', displayName('Ms Teams channel for COPD nurses')),
  ordinary('body', 'an operator with name, address and phone, no condition', operator('Jane Smith, jane.smith@nhs-trust.example.org, +44 113 496 0000')),
  ordinary('body', 'an on-call engineer with a mobile', operator('Peter Brown (on-call engineer) 07700 900123')),
  ordinary('body', 'a publisher and a webmail contact, no condition', tags({ publisher: 'Jane Smith. Contact: peter.brown@gmail.com' })),
  ordinary('body', 'a clinician in a skill description', skill('Grades asthma attacks by peak flow; built with Dr Peter Brown.')),
  ordinary('body', 'a clinician-named endpoint path', endpoint({ url: 'https://agents.example.org/oncology/dr-emily-clark/a2a' })),
  ordinary('body', 'a team in an endpoint query', endpoint({ url: 'https://diabetes.northwind.example.org/a2a?team=jane-smith' })),
  ordinary('body', 'conditions and clinicians in separate tags', tags({ clinical_lead: 'Dr Jane Smith', conditions: ['diabetes', 'asthma'], contact: 'jane.smith@gmail.com', })),
  ordinary('query', 'a discovery query for a condition', {
    capability: 'triage.diabetes',
    q: 'diabetes referrals Leeds',
  }),
  ordinary('query', 'a search for a clinician', { q: 'Dr Smith cardiology' }),
  ordinary('query', 'a publisher and a condition in separate parameters', {
    publisher: 'Jane Smith',
    condition: 'asthma',
  }),
  ordinary('header', 'a user agent naming its maintainer', {
    'user-agent': 'Northwind Diabetes Agent/1.0 (contact jane.smith@northwind.example.org)',
  }),
  ordinary('header', 'a client name header', { 'x-client-name': 'Mayo Clinic Oncology Triage' }),
  ordinary('header', 'a clinician in a caller-chosen header', {
    'x-contact': 'Dr Jane Smith, diabetes lead',
  }),
  // Found by the generated registrations (generated-ordinary.ts): codes a service covers, a result word
  // that names a service, a clinician's clinic for a condition with a number in it.
  ...[
    'Covers ICD-10 I21.4 and I63.9. Contact Jane Smith, jane.smith@northwind.nhs.uk',
    'ICD-10-CM: E11.9, I10.0 or I63.9. Questions: Mr Patel, patel@contoso-health.com',
    'Contact jane.smith@northwind.nhs.uk. Dr Jane Smith oversees the chest pain medication review service.',
    'Ms Brown runs the asthma scan clinic; contact ms.brown@northwind.nhs.uk.',
    "Takes referrals for Ms Smith's type 2 diabetes clinic.",
  ].map((text) => ordinary('body', `generated: ${text.slice(0, 50)}`, description(text))),
  ...HELD_OUT_ORDINARY.map((text, i) =>
    ordinary('body', `held out: ${text.slice(0, 50)}`, field(i)[0](text)),
  ),
  // Found by the review of round 4's fixes: what they refused.
  ...[
    'Triage agent. Pilot started on three wards in May; questions to Sarah Jones, sarah.jones@northwind.nhs.uk.',
    'Agent started on 2024-01-01. Contact Sarah Jones, 0161 496 0123',
    'Release history of the agent is on the wiki. Support: Sarah Jones, sarah.jones@vendor.com',
    'History of changes for Sarah Jones',
    'Sepsis alerts, escalated for Sarah Jones to review',
    'COPD exacerbation alerts for Sarah Jones to triage',
    'Cancer MDT bookings for Sarah Jones',
    "Cancer waiting lists for Peter Brown's team",
    'Uses the sepsis method in Michael Thompson (2019)',
    'Builds on cancer staging work in Peter Brown and Mary Jones',
    'Stroke thrombolysis alerts in John Radcliffe',
    'COVID-19 testing in Charles Sturt',
    'HIV testing kits for Terrence Higgins',
    'Obesity analytics for Jamie Oliver',
    'Handles ICD-10 codes E11.9 and I10.0 for Sarah Jones',
    'Diabetes codes (ICD-10 E11.9; E11.65) for Sarah Jones',
    'Admin user: Emma Clarke; manages the sepsis alerts',
    'Created by user Peter Brown. Stroke alerts',
  ].map((text, i) => ordinary('body', `review: ${text.slice(0, 50)}`, field(i)[0](text))),
  ...ROUND_4_ORDINARY.map((text, i) => ordinary('body', `round 4: ${text.slice(0, 50)}`, field(i)[0](text))),
];
