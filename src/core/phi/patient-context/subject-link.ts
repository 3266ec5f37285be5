/**
 * About whom: whether a health mention is about a person (rule 3 of ../patient-context.ts), and
 * whether a contact detail, the person and the mention stand close enough together to be one record.
 */
import { CONNECTIVES, RESULT_WORDS } from '../patient-words.ts';
import type { Contact } from './contact-details.ts';
import type { Health } from './health-mentions.ts';
import type { Person } from './persons.ts';
import { BLANK_LINE, SENTENCE_END, type Span } from './spans.ts';

const WINDOW_BEFORE = 80;
const WINDOW_AFTER = 160;
/** How far apart a contact detail, a person and a fact about them may stand (characters). */
export const CONTACT_SPAN = 200;
const MAX_GOVERNED_GAP = 60;
// Verbs that make what follows them about their subject: "admitted with sepsis", "treated for TB".
const ADMITTED_FOR =
  /(?<![\p{L}])(?:re-?admitted|admitted|treated|referred|seen|presented|presenting|presents|started|put)\s+(?:with|for|on)(?![\p{L}])/giu;

/** Whether the words between a name and a health mention keep the name its subject ("John Smith, 54, was"). */
function governs(text: string, person: Span, health: Span): boolean {
  if (health.start < person.end || health.start - person.end > MAX_GOVERNED_GAP) return false;
  const gap = text
    .slice(person.end, health.start)
    .replace(/^['’]s(?![\p{L}])/u, ' ')
    .replace(/\([^()]{0,40}\)/g, ' ')
    .replace(ADMITTED_FOR, ' ');
  return gap
    .split(/[\s,:;–—-]+/)
    .every(
      (word) =>
        word === '' || CONNECTIVES.has(word.toLowerCase()) || /^\d{1,3}(?:yo|yrs?|[mf])?$/i.test(word),
    );
}

// A fact, then "for" or "in" the person, in one clause: "Hep C viral load undetectable for Peter
// Kowalski, …", "PTSD — both diagnosed in veteran James Miller, age 39". Only words about the finding
// may stand between (not "alerts", "bookings", "kits": those are for staff and places), and the name
// ends the clause or goes on about them ("…, age 39", "after 12 weeks"), not "to review", "'s team", "(2019)".
const FOR_PERSON =
  /^((?:[\s–—-]+[\p{L}/-]+){0,4}?)[\s–—-]+(?:for|in)\s+(?:(?:the|our|a)\s+)?(?:(?:\d{1,3}[\s-]?(?:year|yr|month)s?[\s-]?old|veteran|patient|pt|child|baby|infant|boy|girl|man|woman)\s+)?$/iu;
const FINDING_WORDS: ReadonlySet<string> = new Set([
  ...RESULT_WORDS,
  ...CONNECTIVES,
  ...'undetectable detectable detected noted recorded viral load levels level count both confirmed diagnosed identified found reported'.split(' '),
]);
const AFTER_FOR_PERSON = /^(?:\s*(?:$|[,.;:!?)]|\(\s*\d{1,3}\s*\)|\d{1,3}\b)|\s+(?:aged?|who|is|was|has|had|after|since|on|at|from)\b)/iu;
function isFor(text: string, person: Person, health: Health): boolean {
  if (health.end > person.start || person.start - health.end > 80) return false;
  const gap = FOR_PERSON.exec(text.slice(health.end, person.start));
  if (gap === null) return false;
  const words = (gap[1] ?? '').split(/[\s–—-]+/).filter((word) => word !== '');
  return words.every((word) => FINDING_WORDS.has(word.toLowerCase())) && AFTER_FOR_PERSON.test(text.slice(person.end, person.end + 24));
}

function near(text: string, person: Person, health: Health): boolean {
  if (health.start < person.start - WINDOW_BEFORE || health.end > person.end + WINDOW_AFTER) return false;
  return !BLANK_LINE.test(text.slice(Math.min(person.start, health.start), Math.max(person.end, health.end)));
}

/**
 * Whether this health mention is about this person by rules 1–3. With a contact detail beside them, a
 * named person's fact also counts when it is theirs ("her results") or the detail is one only a private
 * person has (a personal mailbox, a member id).
 */
export function isAbout(text: string, person: Person, health: Health, contact?: Contact): boolean {
  // A code named by its code system: about a patient or a titled person in the same clause only.
  if (health.clauseOnly && person.kind === 'named') return false;
  if (health.clauseOnly && SENTENCE_END.test(text.slice(Math.min(person.end, health.end), Math.max(person.start, health.start))))
    return false;
  switch (person.kind) {
    case 'patient':
      return near(text, person, health);
    case 'titled':
      return health.fact && near(text, person, health);
    case 'named':
      if (!health.fact) return false;
      if (governs(text, person, health) || isFor(text, person, health)) return true;
      return (
        contact !== undefined &&
        (health.owned || health.result || contact.private) &&
        near(text, person, health)
      );
  }
}

/** Whether the spans stand within {@link CONTACT_SPAN} of each other, in one passage. */
export const withinSpan = (text: string, ...spans: Span[]): boolean => {
  const start = Math.min(...spans.map((s) => s.start));
  const end = Math.max(...spans.map((s) => s.end));
  return end - start <= CONTACT_SPAN && !BLANK_LINE.test(text.slice(start, end));
};
