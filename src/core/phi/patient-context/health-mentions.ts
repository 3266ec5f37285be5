/**
 * What: the health mentions in a string (rule 2 of ../patient-context.ts), each judged a fact about
 * someone or a scope (the conditions an agent or a service handles).
 */
import { CONDITION_ACRONYMS, CONDITION_TERMS, RESULT_WORDS, SERVICE_NOUNS } from '../patient-words.ts';
import { allMatches, SENTENCE_END, startingWithin, type Span } from './spans.ts';

/**
 * `fact`: about someone, not a scope; `owned`: after his/her/their; `result`: before a result word;
 * `clauseOnly`: about someone only in the same clause (a code named by its code system).
 */
export type Health = Span & { readonly fact: boolean; readonly owned: boolean; readonly result: boolean; readonly clauseOnly?: boolean };

const NOT_LETTER = '(?<![\\p{L}\\d])';
const END_WORD = '(?![\\p{L}\\d])';
const CONDITION = new RegExp(`${NOT_LETTER}(?:${CONDITION_TERMS.join('|')})${END_WORD}`, 'giu');
/** A whole word naming a condition of the lexicon: the name rules never read it as a name. */
export const CONDITION_WORD = new RegExp(`^(?:${CONDITION_TERMS.join('|')})$`, 'iu');
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
export const ANY_HEALTH = new RegExp(
  [CONDITION, ACRONYM, PHRASE, ICD10].map((re) => `(?:${re.source})`).join('|'),
  'iu',
);
const OWNER_BEFORE = /(?<![\p{L}])(?:his|her|their|my)\s+(?:[\p{L}-]+\s+)?$/iu;
const COHORT_BEFORE =
  /(?<![\p{L}])(?:people|patients|adults|children|persons|those|anyone|users|individuals|members|families|carers|women|men|teenagers|infants|residents|clients)\s+(?:(?:who\s+(?:are|were|have|have\s+been)|living|newly|recently)\s+)?(?:with|diagnosed\s+with|(?:at\s+risk\s+of))?\s*(?:[\p{L}-]+\s+)?$/iu;
const NEXT_WORD = /^[\s\-–+&/]*([\p{L}][\p{L}'’-]*)/u;
const CHAIN_GAP = /^(?:\s*(?:,|\/|&|\+|\band\b|\bor\b)\s*)+$|^\s+$/iu;

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
export function findHealth(text: string): Health[] {
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
