/**
 * Characters a name shown to people may not hold (docs/api.md, "Names"; issue 48): text that renders
 * differently from what it is. `NHS Triage \u202Egnp.exe\u202C Official` reads as `…exe.png…`, and a
 * zero-width space makes `NHS Triage` and `NHS\u200B Triage` two names that look the same.
 *
 * - bidirectional controls (`Bidi_Control`: U+061C, U+200E–U+200F, U+202A–U+202E, U+2066–U+2069);
 * - invisible characters: every default-ignorable code point (zero-width space, joiner and non-joiner,
 *   word joiner, BOM, soft hyphen, variation selectors, Hangul fillers, tag characters…) and every
 *   other format character (`Cf`);
 * - control characters (`Cc`: tab, line feed, C1 controls) and line or paragraph separators.
 *
 * Emoji sequences joined by U+200D or styled by U+FE0F are refused with them: a name is for reading in
 * a list, and a joiner is exactly what makes two names look alike.
 */

type Kind = 'a bidirectional control character' | 'an invisible character' | 'a control character' | 'a line or paragraph separator';

const RULES: ReadonlyArray<readonly [RegExp, Kind]> = [
  [/\p{Bidi_Control}/u, 'a bidirectional control character'],
  [/[\p{Default_Ignorable_Code_Point}\p{Cf}]/u, 'an invisible character'],
  [/\p{Cc}/u, 'a control character'],
  [/[\p{Zl}\p{Zp}]/u, 'a line or paragraph separator'],
];

const ANY_REFUSED = new RegExp(RULES.map(([rule]) => rule.source).join('|'), 'u');

/** `U+202E`: how a reason names a code point. */
const codePointOf = (char: string) => `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;

/** The first character of `name` a name may not hold: its code point (`U+202E`), what it is, and its position (from 1). */
export function firstRefusedCharacter(name: string): { codePoint: string; kind: Kind; position: number } | undefined {
  if (!ANY_REFUSED.test(name)) return undefined;
  let position = 0;
  for (const char of name) {
    position += 1;
    const kind = RULES.find(([rule]) => rule.test(char))?.[1];
    if (kind) return { codePoint: codePointOf(char), kind, position };
  }
  return undefined;
}

/**
 * Why `name` cannot be shown as it is, naming the first character refused and where it is, or
 * undefined when every character is one a person sees for what it is.
 */
export function refusedNameCharacter(name: string): string | undefined {
  const refused = firstRefusedCharacter(name);
  if (!refused) return undefined;
  return `holds ${refused.codePoint}, ${refused.kind}, at character ${refused.position}: names are shown to people, and this one would not read as what it is`;
}
