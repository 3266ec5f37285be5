/**
 * Visemes (docs/avatar.md, "Visemes"): the mouth shapes the avatar page animates, the mapping from
 * espeak-ng's phoneme mnemonics to them, and the timeline `POST /tts` returns. Pure.
 */

/** The Oculus/Meta 15-viseme set. `sil` is the closed, resting mouth. */
export const VISEMES = ['sil', 'PP', 'FF', 'TH', 'DD', 'kk', 'CH', 'SS', 'nn', 'RR', 'aa', 'E', 'I', 'O', 'U'] as const;
export type Viseme = (typeof VISEMES)[number];

/** Consonant mnemonics by prefix, two-letter affricates before their first letter. */
const CONSONANTS: readonly (readonly [string, Viseme])[] = [
  ['tS', 'CH'], ['dZ', 'CH'], ['S', 'CH'], ['Z', 'CH'],
  ['T', 'TH'], ['D', 'TH'],
  ['p', 'PP'], ['b', 'PP'], ['m', 'PP'],
  ['f', 'FF'], ['v', 'FF'],
  ['t', 'DD'], ['d', 'DD'],
  ['k', 'kk'], ['g', 'kk'], ['N', 'kk'], ['x', 'kk'], ['h', 'kk'],
  ['s', 'SS'], ['z', 'SS'],
  ['n', 'nn'], ['l', 'nn'], ['L', 'nn'],
  ['r', 'RR'],
  ['w', 'U'], ['j', 'I'],
]; // prettier-ignore

/** Vowel mnemonics by their first character (diphthongs take their first quality). */
const VOWELS: Readonly<Record<string, Viseme>> = {
  a: 'aa', A: 'aa', V: 'aa',
  e: 'E', E: 'E', '@': 'E', '3': 'E',
  i: 'I', I: 'I', y: 'I',
  '0': 'O', o: 'O', O: 'O',
  u: 'U', U: 'U',
}; // prettier-ignore

/**
 * The viseme of one espeak-ng phoneme mnemonic (`-x` output: `'oU`, `tS`, `@`, `_:`…). Stress marks
 * are ignored; a pause or a bare modifier has no viseme (undefined). An unlisted consonant is `DD`.
 */
export function phonemeViseme(mnemonic: string): Viseme | undefined {
  const phoneme = mnemonic.replace(/[',%=]/g, '').replace(/_[:!]?/g, '');
  if (!/[A-Za-z0-9@]/.test(phoneme)) return undefined;
  const vowel = VOWELS[phoneme[0] as string];
  if (vowel) return vowel;
  return CONSONANTS.find(([prefix]) => phoneme.startsWith(prefix))?.[1] ?? 'DD';
}

const LETTERS: Readonly<Record<string, Viseme>> = {
  a: 'aa', e: 'E', i: 'I', y: 'I', o: 'O', u: 'U', w: 'U',
  b: 'PP', m: 'PP', p: 'PP', f: 'FF', v: 'FF', t: 'DD', d: 'DD',
  c: 'kk', g: 'kk', h: 'kk', k: 'kk', q: 'kk', x: 'kk', j: 'CH', s: 'SS', z: 'SS', l: 'nn', n: 'nn', r: 'RR',
}; // prettier-ignore

/**
 * A rough viseme per letter, used only when the engine's transcription could not be matched to the
 * words: vowels by their letter, consonants by the table above, anything else `DD`.
 */
export function letterVisemes(word: string): Viseme[] {
  return [...word.toLowerCase().normalize('NFKD')].filter((char) => /[\p{L}\p{N}]/u.test(char)).map((char) => LETTERS[char] ?? 'DD');
}

/** One word to place on the timeline: its visemes (one per phoneme) and the pause that follows it. */
export type TimelineWord = { readonly word: string; readonly visemes: readonly Viseme[]; readonly pauseAfter: number };

/** One entry of the timeline (contract §10): the word being said, its span, and the mouth shape. */
export type VisemeCue = { word: string; start_ms: number; end_ms: number; viseme: Viseme };

/**
 * Spreads the words over the span of the audio where speech is heard, in proportion to their
 * phoneme counts plus pause units between them (none after the last word). Each run of equal
 * visemes within a word is one cue; boundaries are floored to whole milliseconds, so cues are in
 * order, touch without overlapping, and never pass `span.endMs`. Cues shorter than a millisecond are
 * dropped (a phoneme never is in real speech).
 */
export function visemeTimeline(words: readonly TimelineWord[], span: { readonly startMs: number; readonly endMs: number }): VisemeCue[] {
  const units = words.reduce((sum, word, index) => sum + word.visemes.length + (index < words.length - 1 ? word.pauseAfter : 0), 0);
  if (units === 0 || span.endMs <= span.startMs) return [];
  const msPerUnit = (span.endMs - span.startMs) / units;
  const at = (unit: number) => Math.floor(span.startMs + unit * msPerUnit);
  const cues: VisemeCue[] = [];
  let unit = 0;
  for (const word of words) {
    for (let index = 0; index < word.visemes.length; ) {
      const viseme = word.visemes[index] as Viseme;
      let run = 1;
      while (word.visemes[index + run] === viseme) run++;
      const cue = { word: word.word, start_ms: at(unit + index), end_ms: at(unit + index + run), viseme };
      if (cue.end_ms > cue.start_ms) cues.push(cue);
      index += run;
    }
    unit += word.visemes.length + word.pauseAfter;
  }
  return cues;
}
