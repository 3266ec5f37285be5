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
import {
  CONDITION_ACRONYMS,
  CONDITION_TERMS,
  CONNECTIVES,
  GIVEN_NAMES,
  HONORIFICS,
  NOT_A_PATIENT_BEFORE,
  NOT_NAME_WORDS,
  ORGANISATION_NOUNS,
  RESULT_WORDS,
  ROLE_MAILBOXES,
  SERVICE_NOUNS,
  SURNAME_NOUNS,
} from './patient-words.ts';

type Span = { readonly start: number; readonly end: number };
/** `patient`: a patient word names them; `titled`: Mr/Mrs/member…; `named`: a given name or an e-mail says so. */
type Person = Span & { readonly kind: 'patient' | 'titled' | 'named' };
/**
 * `fact`: about someone, not a scope; `owned`: after his/her/their; `result`: before a result word;
 * `clauseOnly`: about someone only in the same clause (a code named by its code system).
 */
type Health = Span & { readonly fact: boolean; readonly owned: boolean; readonly result: boolean; readonly clauseOnly?: boolean };

/** What the rules found in one string. */
export type PatientContext = { readonly nameWithCondition: boolean; readonly contactWithCondition: boolean };

const NOTHING: PatientContext = { nameWithCondition: false, contactWithCondition: false };
const WINDOW_BEFORE = 80;
const WINDOW_AFTER = 160;
const CONTACT_SPAN = 200;
const MAX_GOVERNED_GAP = 60;

const NOT_LETTER = '(?<![\\p{L}\\d])';
const END_WORD = '(?![\\p{L}\\d])';
const CONDITION = new RegExp(`${NOT_LETTER}(?:${CONDITION_TERMS.join('|')})${END_WORD}`, 'giu');
const CONDITION_WORD = new RegExp(`^(?:${CONDITION_TERMS.join('|')})$`, 'iu');
const ACRONYM = new RegExp(`${NOT_LETTER}(?:${CONDITION_ACRONYMS.join('|')})${END_WORD}`, 'gu');
const PHRASE = new RegExp(
  `${NOT_LETTER}(?:diagnosed\\s+with|diagnosis\\s*(?:of|:)|dx\\s*(?::|of)|(?:tested\\s+)?positive\\s+for|tested\\s+positive` +
    `|suffer(?:s|ing|ed)?\\s+from|complain(?:s|ing|ed)?\\s+of)${END_WORD}`,
  'giu',
);
// Words that make the condition after them a fact about someone ("hx of COPD", "recovering from an
// overdose"), but say nothing by themselves: "release history of the agent", "treated for" alone.
const HISTORY_PHRASE = new RegExp(
  `${NOT_LETTER}(?:(?:hx|pmhx|pmh|h\\/o|(?:past\\s+)?(?:medical\\s+)?history)\\s+of|recovering\\s+from|(?:being\\s+)?treated\\s+for` +
    `|in\\s+remission\\s+from)${END_WORD}`,
  'giu',
);
/** How far after a history phrase its condition may start, within the clause: "hx of severe COPD". */
const HISTORY_REACH = 40;
// A sentence's full stop may follow a code ("…and I63.9."); a further digit or letter may not (a version, "A12.3.4").
const ICD10 = /(?<![\w.])[A-TV-Z]\d{2}\.\d{1,4}(?!\w|\.\w)/g;
// Codes named by their code system ("ICD-10 I21.4", "ICD-10-CM codes: E11.9; I10.0 and I63.9") list what
// a service covers far more often than they record a diagnosis: about a person only in the same clause
// ("Mrs Jones — ICD-10 F20.0"), not a sentence away ("Ms Brown leads the service. Covers ICD-10 I21.4.").
const CODE_SYSTEM_BEFORE =
  /(?<![\w])ICD[\s-]?1[01](?:[\s-]?CM)?(?:\s+codes?)?\s*[:(]?\s*(?:[A-TV-Z]\d{2}\.\d{1,4}\s*(?:[,;/]|\band\b|\bor\b)\s*)*$/i;
/**
 * Whether any health mention is there at all, in one pass before the costlier search for names.
 * Case-insensitive, so it may say yes to an acronym in lower case; it never says no wrongly.
 */
const ANY_HEALTH = new RegExp(
  [CONDITION, ACRONYM, PHRASE, ICD10].map((re) => `(?:${re.source})`).join('|'),
  'iu',
);
const OWNER_BEFORE = /(?<![\p{L}])(?:his|her|their|my)\s+(?:[\p{L}-]+\s+)?$/iu;
const COHORT_BEFORE =
  /(?<![\p{L}])(?:people|patients|adults|children|persons|those|anyone|users|individuals|members|families|carers|women|men|teenagers|infants|residents|clients)\s+(?:(?:who\s+(?:are|were|have|have\s+been)|living|newly|recently)\s+)?(?:with|diagnosed\s+with|(?:at\s+risk\s+of))?\s*(?:[\p{L}-]+\s+)?$/iu;
const NEXT_WORD = /^[\s\-–+&/]*([\p{L}][\p{L}'’-]*)/u;
const CHAIN_GAP = /^(?:\s*(?:,|\/|&|\+|\band\b|\bor\b)\s*)+$|^\s+$/iu;
// Verbs that make what follows them about their subject: "admitted with sepsis", "treated for TB".
const ADMITTED_FOR =
  /(?<![\p{L}])(?:re-?admitted|admitted|treated|referred|seen|presented|presenting|presents|started|put)\s+(?:with|for|on)(?![\p{L}])/giu;
const BLANK_LINE = /\n[ \t\r]*\n/;
// The end of a sentence or clause: a full stop before a space (not the dot inside "I21.4"), ; ! ? or a line break.
const SENTENCE_END = /[;!?\n]|\.(?=\s|$)/;

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

// Personal mailbox providers: an address there belongs to one person, never to a vendor's desk.
const FREE_MAIL =
  /^(?:gmail|googlemail|yahoo|ymail|hotmail|outlook|live|msn|icloud|me|aol|proton|protonmail|gmx|web|mail|yandex|orange|free|laposte|btinternet|sky|virginmedia|talktalk|ntlworld|libero)\./i;
const EMAIL =
  /(?<![\w.%+-])([A-Za-z0-9][\w.%+-]{0,63})@([A-Za-z0-9][A-Za-z0-9-]{0,62}(?:\.[A-Za-z0-9][A-Za-z0-9-]{0,62}){1,8})(?![\w-])/g;
const PHONE =
  /(?<![\w.+/-])(?:\+\d{1,3}[\s.-]?)?(?:\(\d{1,5}\)[\s.-]?)?(?:\d{2,8}(?:[\s.-]\d{2,8}){1,4}|0\d{9,11})(?![\w-]|[.,]\d)/g;
// Freephone and non-geographic service numbers (UK 0800, 0808, 03xx, 084x, 087x; North American 8xx toll-free).
const SERVICE_NUMBER = /^(?:0|44)(?:80[08]|3[0347]\d|84[345]|87[01])|^1?8(?:00|88|77|66|55|44|33)/;
const MEMBER_ID =
  /(?<![\p{L}])(?:member(?:ship)?|policy|insurance|subscriber|beneficiary|medicaid|medicare)[\s_-]{0,2}(?:id|no|number|num|#)\.?[\s:#=-]{0,4}([A-Za-z0-9][A-Za-z0-9-]{3,24})/giu;
const GIVEN_LOWER: ReadonlySet<string> = new Set([...GIVEN_NAMES].map((name) => name.toLowerCase()));

// Every name the rules read has two capitalised words side by side ("Mr Smith", "J. Smith", "Jane
// Smith", "Mrs O'Brien"); every other person is an e-mail address. Keys, signatures and certificates
// have neither. The ASCII form is tested first: it is several times cheaper.
const TWO_CAPITALISED_ASCII = /[A-Z][a-z]*\.? {1,2}[A-Z](?:'[A-Z])?[a-z]/;
const TWO_CAPITALISED = /\p{Lu}\p{Ll}*\.? {1,2}\p{Lu}(?:['’]\p{Lu})?\p{Ll}/u;
const NON_ASCII = /[\u0080-\uffff]/;
const hasTwoCapitalisedWords = (text: string): boolean =>
  TWO_CAPITALISED_ASCII.test(text) || (NON_ASCII.test(text) && TWO_CAPITALISED.test(text));

function allMatches(re: RegExp, text: string): RegExpExecArray[] {
  re.lastIndex = 0;
  const found: RegExpExecArray[] = [];
  for (let m = re.exec(text); m !== null; m = re.exec(text)) found.push(m);
  return found;
}

// --- What: health facts and scopes -------------------------------------------------------------------

// Result words that also name a service when a service noun follows: "medication review", "scan
// clinic", "test service". Not "positive", "result" or "diagnosis": "HIV positive referral" is hers.
const SERVICE_HEADS: ReadonlySet<string> = new Set(['medication', 'medications', 'prescription', 'test', 'tests', 'scan', 'biopsy']);
const isServiceNoun = (word: string): boolean => SERVICE_NOUNS.has(word) || SERVICE_NOUNS.has(word.replace(/^.*-/, ''));

/**
 * Whether the words after a condition make it a scope (a service) or a fact (a result), looking two
 * words on. Some result words name a service when a service noun follows: "medication review", "scan clinic".
 */
function wordsAfter(text: string, end: number): 'scope' | 'result' | undefined {
  let rest = text.slice(end, end + 64);
  for (let i = 0; i < 3; i++) {
    const m = NEXT_WORD.exec(rest);
    if (m === null || (i > 0 && /^[^\p{L}]*[,.;:()!?]/u.test(rest))) return undefined;
    const word = (m[1] ?? '').toLowerCase();
    rest = rest.slice(m[0].length);
    if (RESULT_WORDS.has(word)) {
      const next = /^\s+([\p{L}][\p{L}'’-]*)/u.exec(rest)?.[1]?.toLowerCase() ?? '';
      return SERVICE_HEADS.has(word) && isServiceNoun(next) && !RESULT_WORDS.has(next) ? 'scope' : 'result';
    }
    if (isServiceNoun(word)) return 'scope';
  }
  return undefined;
}

/** Every health mention in `text`, in order, each judged fact or scope. */
function findHealth(text: string): Health[] {
  const conditions = [...allMatches(CONDITION, text), ...allMatches(ACRONYM, text)].sort(
    (a, b) => a.index - b.index,
  );
  const found: Health[] = [];
  // Right to left, so that "diabetes, asthma and COPD referrals" passes the scope back along the list.
  let nextScope: { start: number; scope: boolean } | undefined;
  for (let i = conditions.length - 1; i >= 0; i--) {
    const m = conditions[i] as RegExpExecArray;
    const start = m.index;
    const end = start + m[0].length;
    const owned = OWNER_BEFORE.test(text.slice(Math.max(0, start - 32), start));
    const after = wordsAfter(text, end);
    const chained =
      nextScope !== undefined && nextScope.start >= end && CHAIN_GAP.test(text.slice(end, nextScope.start));
    const scope =
      !owned &&
      after !== 'result' &&
      (after === 'scope' ||
        (chained && nextScope?.scope === true) ||
        COHORT_BEFORE.test(text.slice(Math.max(0, start - 64), start)));
    nextScope = { start, scope };
    found.push({ start, end, fact: !scope, owned, result: after === 'result' });
  }
  for (const m of allMatches(PHRASE, text)) {
    const cohort = COHORT_BEFORE.test(text.slice(Math.max(0, m.index - 64), m.index) + ' ');
    found.push({ start: m.index, end: m.index + m[0].length, fact: !cohort, owned: false, result: !cohort });
  }
  // A history phrase is a fact when a condition follows it in the clause ("hx of COPD"), whatever
  // words come after the condition ("a history of breast cancer screening" is still hers).
  const history = allMatches(HISTORY_PHRASE, text);
  const conditionSpans = history.length === 0 ? [] : conditions.map((c) => ({ start: c.index, end: c.index + c[0].length }));
  for (const m of history) {
    const end = m.index + m[0].length;
    const followed = startingWithin(conditionSpans, end, end + HISTORY_REACH).some(
      (c) => !SENTENCE_END.test(text.slice(end, c.start)),
    );
    if (followed && !COHORT_BEFORE.test(text.slice(Math.max(0, m.index - 64), m.index) + ' '))
      found.push({ start: m.index, end, fact: true, owned: false, result: true });
  }
  for (const m of allMatches(ICD10, text)) {
    const labelled = CODE_SYSTEM_BEFORE.test(text.slice(Math.max(0, m.index - 120), m.index));
    found.push({ start: m.index, end: m.index + m[0].length, fact: true, owned: false, result: !labelled, clauseOnly: labelled });
  }
  return found.sort((a, b) => a.start - b.start);
}

// --- Who: people named in the text -------------------------------------------------------------------

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

type Email = Span & { readonly local: string; readonly personal: boolean; readonly freeMail: boolean };

/** The e-mail addresses in `text`, with whether each reaches a person rather than a shared mailbox. */
function findEmails(text: string): Email[] {
  if (!text.includes('@')) return [];
  return allMatches(EMAIL, text).map((m) => {
    const local = (m[1] ?? '').toLowerCase().replace(/\+.*$/, '');
    const personal = !ROLE_MAILBOXES.has(local) && !/^(?:no-?reply|do-?not-?reply)/.test(local);
    return {
      start: m.index,
      end: m.index + m[0].length,
      local,
      personal,
      freeMail: personal && FREE_MAIL.test(m[2] ?? ''),
    };
  });
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
function findPersons(text: string, emails: Email[]): Person[] {
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

// --- About whom: the link between a person and a health mention --------------------------------------

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
function isAbout(text: string, person: Person, health: Health, contact?: Contact): boolean {
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

/** A contact detail reaching one person; `private`: one a vendor or a service desk would not publish. */
type Contact = Span & { readonly private: boolean };

/** Contact details that reach one person: a personal e-mail address, a non-service phone number, a member id. */
function findContacts(text: string, emails: Email[]): Contact[] {
  const contacts: Contact[] = emails
    .filter((e) => e.personal)
    .map((e) => ({ start: e.start, end: e.end, private: e.freeMail }));
  for (const m of allMatches(PHONE, text)) {
    const digits = m[0].replace(/\D/g, '');
    if (digits.length >= 9 && digits.length <= 15 && !SERVICE_NUMBER.test(digits))
      contacts.push({ start: m.index, end: m.index + m[0].length, private: false });
  }
  for (const m of allMatches(MEMBER_ID, text)) {
    if (((m[1] ?? '').match(/\d/g)?.length ?? 0) >= 4)
      contacts.push({ start: m.index, end: m.index + m[0].length, private: true });
  }
  return contacts;
}

const withinSpan = (text: string, ...spans: Span[]): boolean => {
  const start = Math.min(...spans.map((s) => s.start));
  const end = Math.max(...spans.map((s) => s.end));
  return end - start <= CONTACT_SPAN && !BLANK_LINE.test(text.slice(start, end));
};

/** Farther than any rule looks between a person and a health mention (windows of 80–200 characters). */
const PAIR_REACH = 250;

/** The spans of `sorted` (in order of start) that start within [from, to], found by binary search. */
function startingWithin<T extends Span>(sorted: readonly T[], from: number, to: number): T[] {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if ((sorted[middle] as T).start < from) low = middle + 1;
    else high = middle;
  }
  const found: T[] = [];
  for (let i = low; i < sorted.length && (sorted[i] as T).start <= to; i++) found.push(sorted[i] as T);
  return found;
}

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
