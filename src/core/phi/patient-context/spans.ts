/**
 * Spans of text, and the searches over them that every patient-context rule shares
 * (../patient-context.ts).
 */

export type Span = { readonly start: number; readonly end: number };
/** A blank line: it ends a passage, and nothing is paired across it. */
export const BLANK_LINE = /\n[ \t\r]*\n/;
// The end of a sentence or clause: a full stop before a space (not the dot inside "I21.4"), ; ! ? or a line break.
export const SENTENCE_END = /[;!?\n]|\.(?=\s|$)/;

/** Every match of a global expression in `text`, from the start. */
export function allMatches(re: RegExp, text: string): RegExpExecArray[] {
  re.lastIndex = 0;
  const found: RegExpExecArray[] = [];
  for (let m = re.exec(text); m !== null; m = re.exec(text)) found.push(m);
  return found;
}

/** The spans of `sorted` (in order of start) that start within [from, to], found by binary search. */
export function startingWithin<T extends Span>(sorted: readonly T[], from: number, to: number): T[] {
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
