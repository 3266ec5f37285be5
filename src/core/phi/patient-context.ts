/**
 * Patient context: a person's name or contact details beside a health condition in one string, which
 * no identifier detector sees (a name is not PHI alone, nor is "diabetes"; said of one person they
 * are). The rules — who, what, and is it about them — are written out in docs/api.md, "A person beside
 * a health condition", with what they deliberately leave out.
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
