/**
 * Patient context: a person's name, or their contact details, beside a health condition in one string
 * (issue 19, "identifier-plus-health-content combinations"). The other detectors look for identifiers
 * alone; a name is not PHI alone, nor is "diabetes", but "Patient John Smith, diagnosed with type 2
 * diabetes" is. An agent registry, though, is full of names and conditions that are not about a
 * patient: clinicians ("Dr Smith's cardiology agent"), publishers and contacts ("Jane Smith,
 * jane.smith@vendor.com"), charities and hospitals ("Marie Curie", "St Mary's"), and the conditions an
 * agent handles ("diabetes, asthma and COPD referrals"). So the rules ask what a privacy officer asks:
 *
 * 1. **Who.** A *patient reference*: a name after a patient word ("patient John Smith", "Pt: J. Smith",
 *    "my name is…"); a *titled person*: a name after Mr/Mrs/Ms/Miss/Mx, or after member, subscriber,
 *    client or resident; a *named person*: a known given name and a capitalised surname, or a name an
 *    e-mail address beside it spells. Never a name after Dr, Prof, Nurse, St, Queen…; never one followed
 *    by Hospital, Clinic, Foundation…, by credentials (MD, RN, FRCS) or a role ("consultant
 *    cardiologist", "clinical lead"); never one introduced as an author, maintainer, publisher or owner.
 * 2. **What.** A *health fact*: a diagnosis phrase ("diagnosed with", "positive for", "suffers from"), a
 *    dotted ICD-10 code, or a condition from the lexicon — unless the condition is a *scope*: followed by
 *    a service word ("diabetes referrals", "breast cancer screening", "Asthma UK", "cancer patients") or
 *    after a cohort ("people with diabetes"). A possessive pronoun ("her breast cancer") or a result word
 *    ("HIV positive", "biopsy results") makes it a fact again.
 * 3. **About whom.** A patient reference takes any health mention within a short window; a titled person
 *    any fact; a named person only a fact it governs ("John Smith, 54, was diagnosed with", "Peter
 *    Brown, asthma").
 *
 * `patient_name_condition` is 1–3 together. `patient_contact_condition` is a person's contact detail
 * (an e-mail address that is not a shared mailbox, a phone number that is not freephone, a member or
 * policy id) within 200 characters of a person and a fact about them. For a named person the fact may
 * then also stand apart from the name if it is theirs ("Contact Mary Jones at mary.jones@gmail.com re
 * her breast cancer results"), a result ("…, HIV positive"), or the detail is one only a private person
 * has (a webmail address, a member id): a vendor's contact beside the conditions its agent handles has
 * none of these. Everything works on one string at a time, as the other detectors do; a blank line
 * ends a passage. Names in other scripts, names in capitals ("SMITH, John") and a given name alone are
 * not read: see docs/api.md "PHI guard" for what is deliberately left out.
 */
import { findContacts, findEmails } from './patient-context/contact-details.ts';
import { ANY_HEALTH, findHealth } from './patient-context/health-mentions.ts';
import { findPersons } from './patient-context/persons.ts';
import { startingWithin, type Span } from './patient-context/spans.ts';
import { CONTACT_SPAN, isAbout, withinSpan } from './patient-context/subject-link.ts';

/** What the rules found in one string. */
export type PatientContext = { readonly nameWithCondition: boolean; readonly contactWithCondition: boolean };

const NOTHING: PatientContext = { nameWithCondition: false, contactWithCondition: false };

// Every name the rules read has two capitalised words side by side ("Mr Smith", "J. Smith", "Jane
// Smith", "Mrs O'Brien"); every other person is an e-mail address. Keys, signatures and certificates
// have neither. The ASCII form is tested first: it is several times cheaper.
const TWO_CAPITALISED_ASCII = /[A-Z][a-z]*\.? {1,2}[A-Z](?:'[A-Z])?[a-z]/;
const TWO_CAPITALISED = /\p{Lu}\p{Ll}*\.? {1,2}\p{Lu}(?:['’]\p{Lu})?\p{Ll}/u;
const NON_ASCII = /[\u0080-\uffff]/;
const hasTwoCapitalisedWords = (text: string): boolean =>
  TWO_CAPITALISED_ASCII.test(text) || (NON_ASCII.test(text) && TWO_CAPITALISED.test(text));

/** Farther than any rule looks between a person and a health mention (windows of 80–200 characters). */
const PAIR_REACH = 250;

let lastText: string | undefined;
let lastResult: PatientContext = NOTHING;

/**
 * Reads one string for a person together with a health fact about them (`nameWithCondition`) and for
 * that plus a contact detail reaching them (`contactWithCondition`); see the rules above. A string
 * without two capitalised words side by side or an `@`, or without any health term, costs one or two
 * regular-expression tests. The last answer is remembered: both detectors ask about the same string
 * one after the other.
 */
export function findPatientContext(text: string): PatientContext {
  if (text === lastText) return lastResult;
  lastText = text;
  lastResult = NOTHING;
  if (text.length < 12 || !(text.includes('@') || hasTwoCapitalisedWords(text)) || !ANY_HEALTH.test(text))
    return NOTHING;
  const emails = findEmails(text);
  const people = findPersons(text, emails);
  if (people.length === 0) return NOTHING;
  const health = findHealth(text);
  // Only mentions within reach of each other are paired: every rule looks at most PAIR_REACH away,
  // and pairing every person with every mention made a long text cost its length squared.
  const healthNear = (span: Span) => startingWithin(health, span.start - PAIR_REACH, span.end + PAIR_REACH);
  const nameWithCondition = people.some((p) => healthNear(p).some((h) => isAbout(text, p, h)));
  const contacts = findContacts(text, emails);
  const contactWithCondition = contacts.some((c) =>
    startingWithin(people, c.start - CONTACT_SPAN, c.end + CONTACT_SPAN).some((p) =>
      healthNear(p).some((h) => withinSpan(text, p, h, c) && isAbout(text, p, h, c)),
    ),
  );
  lastResult = { nameWithCondition, contactWithCondition };
  return lastResult;
}
