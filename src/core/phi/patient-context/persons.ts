/**
 * Who: the people a string names (rule 1 of ../patient-context.ts), each with what makes them a
 * person: a patient word, a title, or a given name or an e-mail address that spells the name.
 */
import {
  GIVEN_NAMES,
  HONORIFICS,
  NOT_A_PATIENT_BEFORE,
  NOT_NAME_WORDS,
  ORGANISATION_NOUNS,
  SURNAME_NOUNS,
} from '../patient-words.ts';
import type { Email } from './contact-details.ts';
import { CONDITION_WORD } from './health-mentions.ts';
import { allMatches, startingWithin, type Span } from './spans.ts';

/** `patient`: a patient word names them; `titled`: Mr/Mrs/member…; `named`: a given name or an e-mail says so. */
export type Person = Span & { readonly kind: 'patient' | 'titled' | 'named' };

// Capitalised words: names ("Jane", "O'Brien", "McDonald", "Smith-Jones", "Smith's") and initials ("J.").
const TOKEN =
  /\p{Lu}(?:\p{Ll}+(?:\p{Lu}\p{Ll}+)?(?:['’]\p{Ll}+)?|['’]\p{Lu}\p{Ll}+)(?:-\p{Lu}\p{Ll}+)?|\p{Lu}(?=\.\s)/gu;
const PARTICLE_GAP =
  /^\s{1,2}(?:(?:van|von|de|der|den|da|di|du|del|della|le|la|ter|ten|bin|ibn|al)\s{1,2})?$/;
const POSSESSIVE = /['’]s$/;
const ROLE_BEFORE =
  /(?<![\p{L}])(patient|pt|(?:(?:patient|pt|client|full|legal)['’]?s?[\s_-]?)?name|name\s+of\s+(?:the\s+)?patient|my\s+name\s+is|my\s+name['’]s|i\s+am|i['’]m|member|subscriber|beneficiary|enrol{1,2}ee|claimant|policy[\s-]?holder|client|resident|service[\s-]user)\.?(\s*[:=#,(-]\s*['"‘“]?|\s+(?:is|named|called)\s+|\s+)$/iu;
const PATIENT_ROLE = /^(?:patient|pt|i\s+am|i['’]m|name\s.*|.*name(?:\s+is|['’]s)?)$/iu;
const SELF_INTRODUCTION = /^(?:i\s+am|i['’]m|my\s+name.*)$/iu;
// An author, maintainer, publisher or job title introducing the name, with only other names between.
const AUTHOR_WORD =
  /(?<![\p{L}])(?:by|authors?|authored|maintainers?|maintained|publishers?|published|owners?|owned|developers?|developed|built|created|designed|written|reviewed|reviewers?|approved|approvers?|led|leads?|sponsors?|stewards?|founders?|founded|directors?|managers?|head|chief|chair|officers?|thanks\s+to|credits?|contributors?|editors?|speakers?|presenters?|acknowledgements?)(?![\p{L}])/giu;
// A full stop after a title or an initial ("Mr.", "J.") does not end the clause.
const CLAUSE_END = /(?<!(?<![\p{L}])(?:Mr|Mrs|Ms|Mx|Dr|Prof|St|\p{Lu}))[.!?;\n]/gu;
const NAMES_ONLY = /^(?:[\s:,()&/-]|and|the|\p{Lu}[\p{Ll}'’.-]*)*$/u;
const CREDENTIAL_AFTER =
  /^(?:['’]s)?[\s,(–—-]{0,4}(?:MD|DO|RN|NP|PA-C|MBBS|MBChB|BMBS|FRCP|FRCS|FRCGP|FRCR|FRCPsych|MRCP|MRCGP|PhD|DPhil|MSc|BSc|PharmD|DNP|APRN|CNS|RGN|RMN|FACC|FACP|FACS)\b/u;
const ROLE_AFTER =
  /^[\s,(–—:-]{1,4}(?:(?:the|a|an|our|their|senior|chief|clinical|consultant|head|specialist|lead|principal|staff)\s+){0,3}(?:[\p{L}-]+\s+){0,2}?(?:consultant|surgeon|physician|clinician|doctor|nurse|gp|midwife|pharmacist|therapist|physiotherapist|dietitian|psychologist|psychiatrist|paediatrician|pediatrician|registrar|lead|director|head|chief|manager|founder|ceo|cto|cmo|cio|ccio|cnio|engineer|developer|maintainer|architect|professor|lecturer|researcher|scientist|specialist|practitioner|fellow|analyst|officer|coordinator|administrator|owner|editor|author|\p{L}*olog(?:ist|y)|\p{L}*iatri(?:st|cian))(?![\p{L}])(?!\s+patients?(?![\p{L}]))/iu;
const CLINICIAN_POSSESSIVE =
  /^['’]s\s+(?:[\p{L}\d-]+\s+){0,3}?(?:clinics?|lists?|team|services?|practice|firm|theatres?|wards?|patients|agent|unit|department|rooms|registrar|secretary)(?![\p{L}])/iu;
const GIVEN_LOWER: ReadonlySet<string> = new Set([...GIVEN_NAMES].map((name) => name.toLowerCase()));

type Token = { readonly text: string; readonly start: number; readonly end: number };

/** Capitalised words grouped into runs that could be one name ("Mrs. Jane van Dijk"). */
function capitalisedRuns(text: string): Token[][] {
  const runs: Token[][] = [];
  let run: Token[] = [];
  for (const m of allMatches(TOKEN, text)) {
    const token = { text: m[0], start: m.index, end: m.index + m[0].length };
    const previous = run[run.length - 1];
    const gap = previous === undefined ? '' : text.slice(previous.end, token.start);
    const dotted =
      previous !== undefined &&
      (previous.text.length === 1 || NOT_NAME_WORDS.has(previous.text)) &&
      /^\.\s{1,2}$/.test(gap);
    if (previous !== undefined && !PARTICLE_GAP.test(gap) && !dotted) {
      runs.push(run);
      run = [];
    }
    run.push(token);
  }
  if (run.length > 0) runs.push(run);
  return runs;
}

const isNameWord = (token: Token): boolean =>
  !NOT_NAME_WORDS.has(token.text.replace(POSSESSIVE, '')) && !CONDITION_WORD.test(token.text);

/** Whether the clause before a name introduces it as an author, maintainer, publisher or job holder. */
function introducedAsAuthor(preceding: string): boolean {
  const boundaries = allMatches(CLAUSE_END, preceding);
  const clause = preceding.slice((boundaries[boundaries.length - 1]?.index ?? -1) + 1);
  const words = allMatches(AUTHOR_WORD, clause);
  const last = words[words.length - 1];
  return last !== undefined && NAMES_ONLY.test(clause.slice(last.index + last[0].length));
}

/** Whether an e-mail's local part spells this name ("mary.jones", "mjones", "maryjones1980"). */
function spells(local: string, names: readonly string[]): boolean {
  const first = names[0]?.toLowerCase() ?? '';
  const last = names[names.length - 1]?.toLowerCase() ?? '';
  const letters = local.replace(/[^\p{L}]/gu, '');
  return (
    names.length >= 2 &&
    last.length >= 3 &&
    letters.includes(last) &&
    (letters.includes(first) || letters.startsWith(first.slice(0, 1)))
  );
}

/**
 * How a role word just before a name introduces it: as a patient ("patient John Smith", "Pt: J. Smith",
 * "my name is…", which may still turn out a clinician: `self`), or as an insured or a client (`titled`).
 * It introduces a name when it labels it ("Patient: Okafor Chidi", "patient Okafor Chidi") or the name
 * starts with a given name: "Patient Reported Outcome Measures" is a Title Case phrase, and a bare
 * "Name:" labels products as often as people, so it needs a given name.
 */
function roleBefore(
  preceding: string,
  words: string[],
  given: boolean,
): 'patient' | 'self' | 'titled' | undefined {
  const role = words.length >= 2 ? ROLE_BEFORE.exec(preceding) : null;
  if (role === null) return undefined;
  const word = role[1] ?? '';
  const labelled = !/^name$/i.test(word) && ((role[2] ?? '').trim() !== '' || /^\p{Ll}/u.test(word));
  if (!labelled && !given) return undefined;
  if (!PATIENT_ROLE.test(word)) return 'titled';
  return SELF_INTRODUCTION.test(word) ? 'self' : 'patient';
}

/** The kind of person a run of name words is, or undefined when it is no patient (a clinician, a place…). */
function personKind(
  text: string,
  names: Token[],
  before: Token | undefined,
  after: Token | undefined,
  inPhrase: boolean,
  emails: Email[],
): Person['kind'] | undefined {
  if (before !== undefined && NOT_A_PATIENT_BEFORE.has(before.text)) return undefined;
  if (after !== undefined && ORGANISATION_NOUNS.has(after.text)) return undefined;
  const start = names[0]?.start ?? 0;
  const last = names[names.length - 1] as Token;
  const end = last.end - (POSSESSIVE.test(last.text) ? 2 : 0);
  const words = names.map((t) => t.text.replace(POSSESSIVE, ''));
  const honorific = before !== undefined && HONORIFICS.has(before.text);
  const given = GIVEN_NAMES.has(words[0] ?? '');
  const preceding = text.slice(Math.max(0, start - 48), start);
  const role = roleBefore(preceding, words, given);
  // The common case, kept cheap: capitalised words that nothing makes a person.
  if (role === undefined && !honorific && !given && emails.length === 0) return undefined;
  if (role === 'patient') return 'patient';
  const following = text.slice(end, end + 64);
  if (introducedAsAuthor(preceding) || CREDENTIAL_AFTER.test(following) || ROLE_AFTER.test(following))
    return undefined;
  // "I'm Sarah Lee" is a patient unless a role follows ("…, your asthma nurse").
  if (role === 'self') return 'patient';
  if (honorific && CLINICIAN_POSSESSIVE.test(following)) return undefined;
  // "Miss" and "Master" are also words: in a Title Case phrase ("Never Miss Another Dose") they are not titles.
  const wordTitle = before?.text === 'Miss' || before?.text === 'Master';
  if (honorific && (!wordTitle || !inPhrase || given)) return 'titled';
  if (role === 'titled') return 'titled';
  if (words.length < 2 || after !== undefined) return undefined;
  if (given) return 'named';
  return startingWithin(emails, end - 120, end + 120).some((e) => e.personal && spells(e.local, words))
    ? 'named'
    : undefined;
}

/** Every person the text refers to, with what makes them a person, in order of start. */
export function findPersons(text: string, emails: Email[]): Person[] {
  const people: Person[] = [];
  for (const run of capitalisedRuns(text)) {
    let i = 0;
    while (i < run.length) {
      if (!isNameWord(run[i] as Token)) {
        i++;
        continue;
      }
      // After a title, "Ward" or "Hall" is a surname, not a hospital ward or a hall.
      const titled = i > 0 && HONORIFICS.has((run[i - 1] as Token).text);
      const nameWord = (token: Token) => isNameWord(token) || (titled && SURNAME_NOUNS.has(token.text));
      let j = i;
      while (
        j < run.length &&
        j - i < 3 &&
        nameWord(run[j] as Token) &&
        (j === i || !POSSESSIVE.test((run[j - 1] as Token).text))
      )
        j++;
      const names = run.slice(i, j);
      const kind = personKind(text, names, run[i - 1], run[j], i >= 2, emails);
      const last = names[names.length - 1] as Token;
      if (kind !== undefined)
        people.push({
          start: (names[0] as Token).start,
          end: last.end - (POSSESSIVE.test(last.text) ? 2 : 0),
          kind,
        });
      // "WhatsApp Ravi Patel": a name may start further on, at a given name.
      const given = kind === undefined ? run.slice(i + 1, j).findIndex((t) => GIVEN_NAMES.has(t.text)) : -1;
      i = given >= 0 ? i + 1 + given : j;
    }
  }
  // An address that is itself a name ("jane.doe@…") refers to that person, unless given as an author's.
  for (const email of emails) {
    const [first, surname] = email.local.split(/[._-]/);
    if (
      !email.personal ||
      surname === undefined ||
      !GIVEN_LOWER.has(first ?? '') ||
      !/^\p{L}{2,}$/u.test(surname)
    )
      continue;
    if (!introducedAsAuthor(text.slice(Math.max(0, email.start - 48), email.start)))
      people.push({ start: email.start, end: email.end, kind: 'named' });
  }
  // In order of start, as the pairing's binary search needs (the addresses were added last).
  return people.sort((a, b) => a.start - b.start);
}
