/**
 * The forms a value takes on its way to the detectors (issue 19, finding 2): PHI disguised by
 * Unicode or encoding is the same PHI. `readings` gives the text as sent and, when they differ, its
 * normalised form (HTML entities decoded, NFKC so full-width digits are digits, zero-width and other
 * format characters removed, every dash a hyphen and every space a space) and what it decodes to
 * (percent-encoding, base64 of readable text). JSON inside a string is left to the walker (scan.ts).
 * Each step is cheap to skip: plain ASCII without `&`, `%` or a base64-looking run costs one test.
 */

const NAMED_ENTITIES: Readonly<Record<string, string>> = {
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', ndash: '-', mdash: '-', minus: '-', hyphen: '-', sol: '/', colon: ':', period: '.', num: '#', comma: ',',
};
const ENTITY = /&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|([a-zA-Z]{2,8}));/g;

function decodeEntities(text: string): string {
  return text.replace(ENTITY, (whole, decimal: string | undefined, hex: string | undefined, name: string | undefined) => {
    const code = decimal !== undefined ? Number(decimal) : hex !== undefined ? Number.parseInt(hex, 16) : undefined;
    if (code !== undefined) return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    return NAMED_ENTITIES[(name ?? '').toLowerCase()] ?? whole;
  });
}

const NEEDS_NORMALISING = /[^\x20-\x7e\t\n\r]|&[#a-zA-Z]/;
// Format characters (zero-width space, joiners, word joiner, BOM, soft hyphen…): invisible, and used to split digits.
const FORMAT = /[\p{Cf}]/gu;
const DASH = /[\p{Pd}\u2212\u2043\ufe63\uff0d]/gu;
const SPACE = /[\p{Zs}\u00a0]/gu;

/** The text as a reader sees it: entities decoded, NFKC, invisible characters gone, dashes and spaces plain. */
export function normaliseText(text: string): string {
  if (!NEEDS_NORMALISING.test(text)) return text;
  return decodeEntities(text).normalize('NFKC').replace(FORMAT, '').replace(DASH, '-').replace(SPACE, ' ');
}

const PERCENT = /%[0-9a-fA-F]{2}/;
// A run long enough to hold an identifier once decoded (12 base64 characters are 9 bytes).
const BASE64_RUN = /[A-Za-z0-9+/_-]{12,}={0,2}/g;
const READABLE = /^[\x20-\x7e\t\n\r\u00a0-\uffff]*$/;

function percentDecoded(text: string): string | undefined {
  if (!PERCENT.test(text)) return undefined;
  try {
    const decoded = decodeURIComponent(text.replace(/\+/g, ' '));
    return decoded === text ? undefined : decoded;
  } catch {
    return undefined;
  }
}

/** The readable texts hidden in base64 runs (keys and signatures decode to binary and are skipped). */
function base64Decoded(text: string): string[] {
  const found: string[] = [];
  BASE64_RUN.lastIndex = 0;
  for (let m = BASE64_RUN.exec(text); m !== null && found.length < 8; m = BASE64_RUN.exec(text)) {
    const run = m[0];
    // Words and identifiers are letters only, or digits only: base64 of text mixes cases and digits.
    if (!/[a-z]/.test(run) || !/[A-Z]/.test(run) || !/\d/.test(run)) continue;
    const bytes = Buffer.from(run.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (bytes.length < 9) continue;
    const decoded = bytes.toString('utf8');
    if (!decoded.includes('\ufffd') && READABLE.test(decoded) && /\d/.test(decoded)) found.push(decoded);
  }
  return found;
}

/** Every reading of `text` the detectors should see: the text itself first, then the others that differ. */
export function readings(text: string): string[] {
  const all = [text];
  const add = (value: string | undefined) => {
    if (value !== undefined && !all.includes(value)) all.push(value);
  };
  const normalised = normaliseText(text);
  add(normalised);
  const percent = percentDecoded(normalised);
  add(percent);
  if (percent !== undefined) add(normaliseText(percent));
  if (text.length >= 12) for (const decoded of base64Decoded(normalised)) add(normaliseText(decoded));
  return all;
}
