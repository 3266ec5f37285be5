/**
 * From text to the words the timeline names: splitting the text, reading espeak-ng's per-line
 * phoneme transcription back, and the pauses punctuation adds between words. Pure.
 */
import { letterVisemes, phonemeViseme, type TimelineWord, type Viseme } from './visemes.ts';

/** Pause after a word ending a clause (`,;:` or a dash), in phoneme-length units. */
export const CLAUSE_PAUSE_UNITS = 2;
/** Pause after a word ending a sentence (`.!?`). */
export const SENTENCE_PAUSE_UNITS = 4;

/** Control characters (line breaks included): never spoken, and not something to hand a program. */
const CONTROL = /\p{Cc}/gu;

/** The text as the engine gets it: control characters become spaces. */
export function speechText(text: string): string {
  return text.replace(CONTROL, ' ');
}

/** The whitespace-separated tokens of the text, in order. */
export function speechTokens(text: string): string[] {
  return speechText(text).split(/\s+/u).filter(Boolean);
}

function pauseAfter(token: string): number {
  if (/[.!?…]["')\]]*$/u.test(token)) return SENTENCE_PAUSE_UNITS;
  if (/[,;:\u2013\u2014-]["')\]]*$/u.test(token)) return CLAUSE_PAUSE_UNITS;
  return 0;
}

/** The word a token names on the timeline: without the punctuation around it, unless that is all it is. */
export function wordOf(token: string): string {
  return token.replace(/^\p{P}+|\p{P}+$/gu, '') || token;
}

/**
 * The phonemes of each token from espeak-ng's `-x --sep=|` output when it was given one token per
 * line: one output line per input line, words inside a line separated by spaces. Undefined when the
 * line count does not match, so the caller falls back to letters rather than misalign the words.
 */
export function phonemesPerToken(output: string, tokenCount: number): string[][] | undefined {
  const lines = output.split('\n');
  if (lines.at(-1) === '') lines.pop();
  if (lines.length !== tokenCount) return undefined;
  return lines.map((line) => line.split(/[\s|]+/).filter(Boolean));
}

/**
 * The words of the timeline: each token with at least one viseme, mapped from its phonemes (or, when
 * `phonemes` is undefined, from its letters). A token with nothing to say (a dash, an ellipsis) is not
 * a word; its pause joins the previous word's.
 */
export function timelineWords(tokens: readonly string[], phonemes: readonly (readonly string[])[] | undefined): TimelineWord[] {
  const words: { word: string; visemes: Viseme[]; pauseAfter: number }[] = [];
  tokens.forEach((token, index) => {
    const visemes = phonemes
      ? (phonemes[index] ?? []).map(phonemeViseme).filter((viseme): viseme is Viseme => viseme !== undefined)
      : letterVisemes(token);
    const previous = words.at(-1);
    if (visemes.length > 0) words.push({ word: wordOf(token), visemes, pauseAfter: pauseAfter(token) });
    else if (previous) previous.pauseAfter = Math.max(previous.pauseAfter, pauseAfter(token) || CLAUSE_PAUSE_UNITS);
  });
  return words;
}
