/**
 * The word lists the patient-context rules (patient-context.ts) read. Kept apart from the rules so that
 * a privacy officer can review what counts as a name, a condition or a service without reading code.
 * Each list errs towards precision: a word that is as often something else (a month, a place, a
 * product, a charity) is left out, because a false positive refuses a legitimate agent record.
 */

const words = (text: string): string[] => text.trim().split(/\s+/);

/**
 * Common given names in the languages of Ward's jurisdictions and of the people they serve. Left out
 * on purpose: names that are also ordinary capitalised words or brands (Will, Mark, Grace, Hope, May,
 * June, Victoria, Florence, Jordan, Max, Ada, Alexa, Guy, Gene, Per, Jan, Hugo, Christian…).
 */
export const GIVEN_NAMES: ReadonlySet<string> = new Set(
  words(`
    James John Robert Michael William David Richard Joseph Thomas Charles Christopher Daniel Matthew
    Anthony Donald Steven Stephen Paul Andrew Joshua Kenneth Kevin Brian George Timothy Ronald Edward
    Jason Jeffrey Ryan Jacob Gary Nicholas Eric Jonathan Larry Justin Scott Brandon Benjamin Samuel
    Gregory Alexander Frank Patrick Raymond Jack Dennis Jerry Tyler Aaron Adam Nathan Henry Douglas
    Zachary Peter Kyle Ethan Walter Noah Jeremy Keith Roger Terry Terrence Gerald Harold Sean Carl
    Arthur Lawrence Dylan Jesse Bryan Joe Bruce Gabriel Logan Albert Alan Wayne Elijah Roy Vincent
    Ralph Eugene Russell Bobby Philip Phillip Louis Harry Oliver Charlie Jamie Liam Callum Connor
    Kieran Declan Rhys Owen Gareth Dafydd Ieuan Iain Ian Hamish Alistair Fraser Angus Euan Ewan
    Graham Neil Stuart Malcolm Colin Derek Trevor Nigel Barry Clive Martin Simon Tom Tim Ben Sam
    Dan Nick Matt Mike Steve Dave Chris Tony Andy Rob Bob Jim Jimmy Toby Alfie Freddie Archie Reuben
    Mohammed Mohammad Muhammad Ahmed Ahmad Ali Omar Hassan Hussein Yusuf Ibrahim Mustafa Tariq Imran
    Bilal Khalid Karim Rajesh Sanjay Arjun Rahul Amit Vikram Ravi Suresh Anil Deepak Manoj Sunil
    Chidi Chinedu Emeka Oluwaseun Adebayo Kwame Kofi Themba Thabo Sipho Tendai
    Mary Patricia Jennifer Linda Elizabeth Barbara Susan Jessica Sarah Karen Lisa Nancy Betty Margaret
    Sandra Ashley Kimberly Emily Donna Michelle Carol Amanda Dorothy Melissa Deborah Stephanie Rebecca
    Sharon Laura Cynthia Kathleen Amy Angela Shirley Anna Brenda Pamela Emma Nicole Helen Samantha
    Katherine Catherine Christine Debra Rachel Carolyn Janet Maria Heather Diane Ruth Julie Olivia
    Joyce Kelly Lauren Christina Joan Evelyn Judith Megan Andrea Cheryl Hannah Jacqueline Martha
    Gloria Teresa Ann Anne Sara Frances Kathryn Janice Jean Abigail Alice Judy Sophia Sophie Denise
    Marilyn Beverly Charlotte Marie Diana Julia Lucy Chloe Jane Jenny Joanne Kate Katie Louise Claire
    Clare Fiona Gillian Alison Wendy Tracey Tracy Lorraine Sheila Eileen Maureen Siobhan Niamh Aoife
    Ciara Saoirse Sinead Bridget Moira Morag Eilidh Isla Amelia Mia Ella Freya Isabella Isabelle
    Millie Evie Phoebe Ellie Zoe Harriet Eleanor Georgina Rosie Bethany Leah Naomi Esther Miriam
    Agnes Edith Doris Irene Pauline Yvonne Beatrice Margot Priya Anjali Aisha Fatima Zainab Maryam
    Ayesha Ngozi Amara Abena Yetunde Folake
    Pierre Michel Philippe Alain Nicolas François Francois Jacques Bernard Christophe Laurent Julien
    Sébastien Sebastien Stéphane Stephane Thierry Antoine Mathieu Guillaume Étienne Etienne Marc
    Lucas Léa Manon Camille Chloé Inès Juliette Amélie Nathalie Sylvie Valérie Sandrine Céline
    Aurélie Élodie Élise Margaux Mathilde Brigitte Monique Françoise Hélène Véronique
    Hans Klaus Jürgen Wolfgang Dieter Günter Uwe Stefan Andreas Markus Matthias Tobias Lukas Jonas
    Maximilian Florian Sebastian Johannes Karl Heinz Helmut Friedrich Ursula Monika Petra Sabine
    Gabriele Claudia Stefanie Katrin Anja Birgit Heike Lena Leonie Greta Frieda
    Pieter Piet Henk Kees Willem Joost Bram Sander Thijs Daan Ruben Maarten Jeroen Wouter Femke Sanne
    Lotte Anouk Lieke Marieke Ingrid
    José Jose Antonio Manuel Francisco Juan Javier Carlos Miguel Alejandro Rafael Pedro Pablo Sergio
    Fernando Jorge Alberto Luis Andrés Andres Diego Álvaro Alvaro Raúl Raul Enrique Ramón Ramon João
    Joao Tiago Nuno Carmen María Lucía Lucia Ana Marta Paula Elena Sofía Sofia Isabel Cristina Pilar
    Dolores Beatriz Raquel Mariana Joana
    Giuseppe Giovanni Francesco Mario Luigi Marco Alessandro Matteo Lorenzo Luca Stefano Paolo
    Roberto Salvatore Vincenzo Giulia Francesca Chiara Valentina Alessandra Federica Elisa Martina
    Giorgia Silvia Paola Simona Roberta
    Lars Erik Anders Johan Nils Olof Magnus Mikael Henrik Fredrik Oskar Björn Bjorn Astrid Karin
    Kerstin Birgitta Sigrid Ebba Linnea Freja Mette Hanne
  `),
);

/** Titles that make the capitalised words after them a person's name (case as written). */
export const HONORIFICS: ReadonlySet<string> = new Set(words('Mr Mrs Ms Miss Mx Master Mstr'));

/** Titles of clinicians and dignitaries, and words that make a name a place or an institution. */
export const NOT_A_PATIENT_BEFORE: ReadonlySet<string> = new Set(
  words(`Dr Doctor Prof Professor Nurse Sister Matron Consultant Surgeon Sir Dame Lord Lady Rev Revd
    St Saint Queen King Prince Princess Royal Mount Fort Port Lake Cape`),
);

/** Capitalised words that end a name when they follow it: it names a place or an organisation. */
export const ORGANISATION_NOUNS: ReadonlySet<string> = new Set(
  words(`Hospital Hospitals Infirmary Clinic Clinics Centre Center Institute Foundation Trust House
    Hospice Memorial Medical Health Healthcare University College School Building Wing Unit Ward Road
    Street Lane Avenue Way Square Prize Award Fund Fellowship Lecture Scale Score Test Syndrome Disease
    Lab Labs Laboratory Laboratories Library Group Network Partnership Practice Surgery Society
    Association Charity Appeal Research Inc Ltd LLC Plc PLC GmbH AG Pharma Pharmaceuticals
    Therapeutics Diagnostics Systems Solutions Technologies Ventures Partners Associates Consulting`),
);

/** Organisation nouns that are also common surnames: after Mr/Mrs/Ms they are the surname ("Mr Colin Ward"). */
export const SURNAME_NOUNS: ReadonlySet<string> = new Set(
  words('Ward Hall House Lane Park Way Wing Street Fund'),
);

/**
 * Capitalised words that are never part of a person's name here: sentence openers, domain and
 * product words, FHIR resource names, the organisation nouns. A run of capitalised words is split at
 * them, so "Patient Summary Agent" holds no name and "Contact Jane Smith" holds "Jane Smith".
 */
export const NOT_NAME_WORDS: ReadonlySet<string> = new Set([
  ...HONORIFICS,
  ...NOT_A_PATIENT_BEFORE,
  ...ORGANISATION_NOUNS,
  ...words(`The This That These Those There Their They It Its Our Your We You He She His Her Him
    For And Or But With From To Of In On At By As Via Per See Also Only All Any Each Every Some No Not
    New Our My Me If When Where Who What Which How Why Please Note Notes Example Examples Sample Demo
    Test Synthetic Dummy Fake Version Release Build Supports Support Handles Handle Built Made
    Developed Maintained Owned Runs Uses Used Contact Call Email Phone Tel Fax Ask Write Send Reach
    Patient Patients Pt Client Clients Member Members Subscriber Name Names Resident Service Services
    Agent Agents Assistant Bot App Apps Portal Summary Lookup Record Records Access Safety Flow
    Navigator Hub Connect Link Desk Line Helpline Hotline Care Clinical Triage Referral Referrals
    Pathway Pathways Intake Scheduling Reminders Messaging Outreach Education Engagement Experience
    Voice Companion Monitor Monitoring Check Checker Symptom Symptoms Consent Registry Gateway Mesh
    Team Teams Programme Program Project Model Index Data Digital Cloud Platform Insights Analytics
    Tech AI Observation Condition Encounter Procedure Medication Immunization Appointment Coverage
    Claim Person Practitioner Organization Organisation Location Bundle Resource Resources
    Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June
    July August September October November December
    England Scotland Wales Ireland Britain London Leeds Manchester Birmingham Glasgow Edinburgh
    Cardiff Belfast Dublin Paris Berlin Madrid Rome Amsterdam Stockholm Europe America Africa Asia
    British English American European National General Central North South East West Northern
    Southern Eastern Western Great Greater United Kingdom States Northwind Contoso Fabrikam`),
]);

/**
 * Health conditions, findings and treatments whose mention beside a named person is health data
 * about them. Regular-expression fragments, matched case-insensitively on word boundaries.
 */
export const CONDITION_TERMS: readonly string[] = [
  'type[ -]?[12] diabetes', 'pre-?diabetes', 'diabetes', 'diabetic', 'hiv', 'hepatitis(?: [a-e])?', 'hep [bc]',
  '(?:breast |lung |prostate |bowel |colon |ovarian |cervical |pancreatic |skin |blood |testicular )?cancer',
  'carcinoma', 'tumou?rs?', 'leuka?emia', 'lymphoma', 'melanoma', 'sarcoma', 'myeloma', 'mesothelioma',
  'metasta(?:tic|ses|sis)', 'asthma(?:tic)?', 'emphysema', 'bronchitis', 'pneumonia', 'tuberculosis',
  'cystic fibrosis', 'depression', 'depressive', 'anxiety', 'bipolar', 'schizophreni(?:a|c)', 'psychosis',
  'psychotic', 'autism', 'autistic', 'dementia', "alzheimer['’]?s", "parkinson['’]?s", 'epilepsy', 'epileptic',
  'seizures?', 'stroke', 'heart failure', 'heart attack', 'heart disease', 'myocardial infarction',
  'atrial fibrillation', 'hypertension', 'angina', 'coronary artery disease', 'chronic kidney disease',
  '(?:kidney|renal|liver) (?:failure|disease)', 'dialysis', 'cirrhosis', "crohn['’]?s", 'ulcerative colitis',
  'c[oe]?eliac disease', 'multiple sclerosis', 'motor neurone? disease', 'sickle[ -]cell', 'thalassa?emia',
  'ha?emophilia', 'lupus', '(?:rheumatoid |osteo)?arthritis', 'osteoporosis', 'obesity', 'anorexia',
  'bulimia', 'eating disorder', 'self[ -]harm(?:ing)?', 'suicidal', 'suicide attempt', 'overdose',
  'alcoholism', 'alcohol dependence', 'addiction', 'opioid use disorder', 'substance misuse', 'chlamydia',
  'gonorrh?o?ea', 'syphilis', 'herpes', 'pregnant', 'pregnancy', 'miscarriage', 'abortion', 'infertility',
  'covid(?:-19)?', 'sepsis', 'meningitis', 'measles', 'glaucoma', 'psoriasis', 'migraines?',
  'chronic fatigue syndrome', "down['’]?s syndrome", 'cerebral palsy', 'spina bifida', "huntington['’]?s",
  'muscular dystrophy', 'learning disabilit(?:y|ies)', 'hyp(?:o|er)thyroidism', "addison['’]?s",
  "cushing['’]?s", 'ana?emia', 'chest pain', 'fractured?', 'chemotherapy', 'chemo', 'radiotherapy',
  'insulin', 'metformin', 'methadone', 'antiretrovirals?', 'hba1c', 'viral load', 'cd4 count',
  'appendicitis', 'gout', 'mental illness', 'biopsy', 'mammogram', 'smear test', 'colonoscopy',
]; // prettier-ignore

/** Abbreviations of conditions, matched as written (upper case), so "aids" and "sti" stay words. */
export const CONDITION_ACRONYMS: readonly string[] = [
  'AIDS', 'COPD', 'TB', 'PTSD', 'OCD', 'ADHD', 'CKD', 'IBD', 'IBS', 'MND', 'HPV', 'STI', 'STD', 'MRSA', 'PrEP',
  'HCV', 'HBV', 'T1DM', 'T2DM', 'T1D', 'T2D',
]; // prettier-ignore

/**
 * Words that make a condition a scope rather than a fact when they follow it (possibly after one or two
 * other words): "diabetes referrals", "breast cancer screening service", "Asthma UK", "cancer patients".
 */
export const SERVICE_NOUNS: ReadonlySet<string> = new Set(
  words(`referral referrals pathway pathways clinic clinics service services team teams triage screening
    screenings programme programmes program programs care management support agent agents assistant
    assistants bot bots app apps tool tools platform platforms portal portals module modules model models
    registry registries register registers research unit units ward wards nurse nurses specialist
    specialists expert experts expertise consultant consultants surgeon surgeons physician physicians
    doctor doctors lead leads network networks guideline guidelines guidance protocol protocols patients
    cohort cohorts population populations risk prevention education awareness charity charities society
    association foundation trust uk centre centres center centers hub hubs dashboard dashboards data
    dataset datasets code codes coding terminology questionnaire questionnaires score scores scoring
    assessment assessments monitoring prediction predictions detection classifier classifiers trial
    trials study studies clinical therapy therapies helpline helplines line desk queries enquiries
    inquiries questions funding grant grants fund appeal campaign week day month commissioning audit
    audits outcomes metrics reporting review reviews integration integrations device devices
    calculator calculators related specific focused friendly prevention now action`),
);

/** Words after a condition that make it a fact about someone: "HIV positive", "her biopsy results". */
export const RESULT_WORDS: ReadonlySet<string> = new Set(
  words(`positive negative result results diagnosis diagnosed biopsy scan relapse recurrence status flare
    flare-up test tests medication medications prescription symptoms`),
);

/**
 * Words that may stand between a name and what is said about it, keeping the name the subject:
 * "John Smith, 54, was recently diagnosed", "Peter Brown has asthma", "Jane Doe – HIV positive".
 */
export const CONNECTIVES: ReadonlySet<string> = new Set(
  words(`who whom is was has had have having been being also now currently recently newly previously
    first got gets with a an known confirmed suspected probable possible likely severe mild moderate
    chronic acute early late advanced terminal recurrent active uncontrolled untreated aged age years year old yo y/o yrs weeks wks months pregnant male female m f stage grade end ans jahre años anni jaar år`),
);

/**
 * Local parts of shared mailboxes: an address like support@ reaches a team, not a person, so it is not
 * a person's contact detail.
 */
export const ROLE_MAILBOXES: ReadonlySet<string> = new Set(
  words(`support help helpdesk servicedesk service info information contact contacts enquiries enquiry
    inquiries admin administrator ops operations noreply no-reply donotreply security privacy dpo sales
    team hello office reception bookings appointments referrals triage clinic clinical it webmaster
    postmaster abuse billing accounts feedback press media careers jobs hr legal compliance partners
    api dev devops engineering oncall on-call alerts notifications registry`),
);
