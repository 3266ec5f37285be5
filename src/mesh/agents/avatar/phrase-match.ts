/**
 * Phrase matching with negation, shared by the pain lexicon, the step extractors and the red flags.
 * Pure and deterministic. Text is split into clauses (punctuation and "but"), so a negation in one
 * clause never reaches a phrase in the next: "no fever, but my chest hurts" keeps the chest pain.
 */

/** Words that negate a phrase when they come shortly before it in the same clause. */
export const NEGATORS: readonly string[] = ['no', 'not', 'never', 'without', 'denies', 'deny', 'none', "don't", 'dont', "doesn't", 'doesnt', "isn't", 'isnt', "haven't", 'havent', "hasn't", 'hasnt', "didn't", 'didnt', 'nothing', "aren't", "wasn't", 'neither', 'nor'];

/** How many words before a phrase a negator still applies to it ("no real chest pain"). */
export const NEGATION_WINDOW = 3;

/** Lower-cased clauses of words; apostrophes kept so "doesn't" stays one word. */
export function clausesOf(text: string): string[][] {
  return text
    .toLowerCase()
    .replace(/[’‘]/g, "'")
    .split(/[.,;:!?\n]+|\bbut\b|\bhowever\b|\balthough\b/)
    .map((clause) => clause.split(/[^a-z0-9'/-]+/).filter((word) => word !== ''))
    .filter((words) => words.length > 0);
}

/** One occurrence of a phrase; `negated` when a negator precedes it within the window. */
export type PhraseHit = { readonly phrase: string; readonly negated: boolean };

function indexOfPhrase(words: readonly string[], phrase: readonly string[], from: number): number {
  for (let i = from; i + phrase.length <= words.length; i++) {
    // A phrase word ending in `*` matches any word with that prefix ("hurt*" → hurts, hurting).
    if (phrase.every((part, j) => (part.endsWith('*') ? (words[i + j] ?? '').startsWith(part.slice(0, -1)) : words[i + j] === part))) return i;
  }
  return -1;
}

/** Every phrase of `phrases` found in `text`, each once, with whether it was negated. */
export function findPhrases(text: string, phrases: readonly string[]): PhraseHit[] {
  const hits = new Map<string, boolean>();
  for (const words of clausesOf(text)) {
    for (const phrase of phrases) {
      const parts = phrase.toLowerCase().split(' ');
      for (let at = indexOfPhrase(words, parts, 0); at >= 0; at = indexOfPhrase(words, parts, at + 1)) {
        const before = words.slice(Math.max(0, at - NEGATION_WINDOW), at);
        const negated = before.some((word) => NEGATORS.includes(word));
        // An affirmed mention anywhere wins over a negated one elsewhere.
        hits.set(phrase, (hits.get(phrase) ?? true) && negated);
      }
    }
  }
  return [...hits].map(([phrase, negated]) => ({ phrase, negated }));
}

/** Whether `text` mentions any of `phrases` without negating it. */
export function mentionsAffirmed(text: string, phrases: readonly string[]): boolean {
  return findPhrases(text, phrases).some((hit) => !hit.negated);
}
