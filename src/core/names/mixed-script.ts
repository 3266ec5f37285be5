/**
 * Whether a name mixes writing systems (Unicode Technical Standard #39, section 5.1 "Mixed-Script
 * Detection"), and which: `NНS Тriage` is Latin with two Cyrillic letters, the usual way to make one
 * name pass for another. The console shows such names with a warning (docs/console.md, "Names").
 *
 * The resolved script set of a string is the intersection of its characters' `Script_Extensions`,
 * where Common and Inherited characters (digits, punctuation, spaces, combining marks) count as every
 * script, and Han, Hiragana, Katakana, Hangul and Bopomofo are augmented as UTS #39 says (Japanese
 * mixes Han, Hiragana and Katakana; Korean Han and Hangul; Chinese Han and Bopomofo), so ordinary
 * names in those languages are single-script. A string whose set is empty is mixed-script.
 */

/** Unicode's scripts (Unicode 17.0.0 `Scripts.txt`, Common and Inherited aside); those this Node's regular expressions do not know yet are skipped. */
const SCRIPT_NAMES: readonly string[] = [
  'Adlam', 'Ahom', 'Anatolian_Hieroglyphs', 'Arabic', 'Armenian', 'Avestan', 'Balinese', 'Bamum',
  'Bassa_Vah', 'Batak', 'Bengali', 'Bhaiksuki', 'Bopomofo', 'Brahmi', 'Braille', 'Buginese', 'Buhid',
  'Canadian_Aboriginal', 'Carian', 'Caucasian_Albanian', 'Chakma', 'Cham', 'Cherokee', 'Chorasmian',
  'Coptic', 'Cuneiform', 'Cypriot', 'Cypro_Minoan', 'Cyrillic', 'Deseret', 'Devanagari', 'Dives_Akuru',
  'Dogra', 'Duployan', 'Egyptian_Hieroglyphs', 'Elbasan', 'Elymaic', 'Ethiopic', 'Garay', 'Georgian',
  'Glagolitic', 'Gothic', 'Grantha', 'Greek', 'Gujarati', 'Gunjala_Gondi', 'Gurmukhi', 'Gurung_Khema', 'Han',
  'Hangul', 'Hanifi_Rohingya', 'Hanunoo', 'Hatran', 'Hebrew', 'Hiragana', 'Imperial_Aramaic',
  'Inscriptional_Pahlavi', 'Inscriptional_Parthian', 'Javanese', 'Kaithi', 'Kannada', 'Katakana', 'Kawi',
  'Kayah_Li', 'Kharoshthi', 'Khitan_Small_Script', 'Khmer', 'Khojki', 'Khudawadi', 'Kirat_Rai', 'Lao',
  'Latin', 'Lepcha', 'Limbu', 'Linear_A', 'Linear_B', 'Lisu', 'Lycian', 'Lydian', 'Mahajani', 'Makasar',
  'Malayalam', 'Mandaic', 'Manichaean', 'Marchen', 'Masaram_Gondi', 'Medefaidrin', 'Meetei_Mayek',
  'Mende_Kikakui', 'Meroitic_Cursive', 'Meroitic_Hieroglyphs', 'Miao', 'Modi', 'Mongolian', 'Mro', 'Multani',
  'Myanmar', 'Nabataean', 'Nag_Mundari', 'Nandinagari', 'New_Tai_Lue', 'Newa', 'Nko', 'Nushu',
  'Nyiakeng_Puachue_Hmong', 'Ogham', 'Ol_Chiki', 'Ol_Onal', 'Old_Hungarian', 'Old_Italic',
  'Old_North_Arabian', 'Old_Permic', 'Old_Persian', 'Old_Sogdian', 'Old_South_Arabian', 'Old_Turkic',
  'Old_Uyghur', 'Oriya', 'Osage', 'Osmanya', 'Pahawh_Hmong', 'Palmyrene', 'Pau_Cin_Hau', 'Phags_Pa',
  'Phoenician', 'Psalter_Pahlavi', 'Rejang', 'Runic', 'Samaritan', 'Saurashtra', 'Sharada', 'Shavian',
  'Siddham', 'SignWriting', 'Sinhala', 'Sogdian', 'Sora_Sompeng', 'Soyombo', 'Sundanese', 'Sunuwar',
  'Syloti_Nagri', 'Syriac', 'Tagalog', 'Tagbanwa', 'Tai_Le', 'Tai_Tham', 'Tai_Viet', 'Takri', 'Tamil',
  'Tangsa', 'Tangut', 'Telugu', 'Thaana', 'Thai', 'Tibetan', 'Tifinagh', 'Tirhuta', 'Todhri', 'Toto',
  'Tulu_Tigalari', 'Ugaritic', 'Vai', 'Vithkuqi', 'Wancho', 'Warang_Citi', 'Yezidi', 'Yi',
  'Zanabazar_Square',
];

const SCRIPTS: ReadonlyArray<readonly [string, RegExp]> = SCRIPT_NAMES.flatMap((name) => {
  try {
    return [[name, new RegExp(`\\p{Script_Extensions=${name}}`, 'u')] as const];
  } catch {
    return [];
  }
});

/** The augmented sets of UTS #39 5.1: a Han character also counts as Japanese, Korean and Chinese-with-Bopomofo writing. */
const AUGMENT: Readonly<Record<string, readonly string[]>> = {
  Han: ['Hanb', 'Jpan', 'Kore'],
  Hiragana: ['Jpan'],
  Katakana: ['Jpan'],
  Hangul: ['Kore'],
  Bopomofo: ['Hanb'],
};

const LETTER_LIKE = /[^\p{Script=Common}\p{Script=Inherited}]/u;

/** Per code point: its scripts (undefined: Common or Inherited, every script). Names repeat their letters. */
const scriptsOfChar = new Map<string, ReadonlySet<string> | undefined>();

function scriptsOf(char: string): ReadonlySet<string> | undefined {
  if (scriptsOfChar.has(char)) return scriptsOfChar.get(char);
  // Script_Extensions, not Script: a Common character used by some scripts only (U+30FC, the
  // Japanese long vowel mark) belongs to those.
  const own = SCRIPTS.filter(([, rule]) => rule.test(char)).map(([name]) => name);
  const scripts = own.length === 0 ? undefined : new Set(own.flatMap((name) => [name, ...(AUGMENT[name] ?? [])]));
  if (scriptsOfChar.size < 65_536) scriptsOfChar.set(char, scripts);
  return scripts;
}

/**
 * The scripts a mixed-script name mixes (each character's own script, in the order met), or an empty
 * list for a name written in one script (or in none: digits and punctuation only).
 */
export function mixedScripts(name: string): string[] {
  if (!LETTER_LIKE.test(name)) return [];
  let resolved: Set<string> | undefined;
  const met: string[] = [];
  for (const char of name) {
    const scripts = scriptsOf(char);
    if (scripts === undefined) continue;
    resolved = resolved === undefined ? new Set(scripts) : new Set([...resolved].filter((script) => scripts.has(script)));
    const first = SCRIPTS.find(([script]) => scripts.has(script))?.[0];
    if (first !== undefined && !met.includes(first)) met.push(first);
  }
  return resolved !== undefined && resolved.size === 0 ? met.map((script) => script.replaceAll('_', ' ')) : [];
}
