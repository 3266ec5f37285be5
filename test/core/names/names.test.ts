/**
 * The name rules of issue 48, finding 4, alone: which characters a name may not hold, the UTS #39
 * confusable skeleton names are compared by, and the mixed-script check the console warns with.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { confusableSkeleton } from '../../../src/core/names/confusable-skeleton.ts';
import { mixedScripts } from '../../../src/core/names/mixed-script.ts';
import { firstRefusedCharacter } from '../../../src/core/names/name-characters.ts';

test('bidirectional controls, invisible, control and separator characters are refused; letters of any script are not', () => {
  const refused: Array<[string, string]> = [
    ['\u202E', 'a bidirectional control character'], ['\u2067', 'a bidirectional control character'], ['\u200F', 'a bidirectional control character'], ['\u061C', 'a bidirectional control character'],
    ['\u200B', 'an invisible character'], ['\u200D', 'an invisible character'], ['\u2060', 'an invisible character'], ['\uFEFF', 'an invisible character'],
    ['\u00AD', 'an invisible character'], ['\u3164', 'an invisible character'], ['\uFE0F', 'an invisible character'], ['\u{E0041}', 'an invisible character'],
    ['\u0007', 'a control character'], ['\n', 'a control character'], ['\u0085', 'a control character'], ['\u2028', 'a line or paragraph separator'],
  ];
  for (const [char, kind] of refused) assert.equal(firstRefusedCharacter(`NHS${char} Triage`)?.kind, kind, `U+${char.codePointAt(0)?.toString(16)}`);
  assert.deepEqual(firstRefusedCharacter('ab\u202Ecd'), { codePoint: 'U+202E', kind: 'a bidirectional control character', position: 3 });
  for (const name of ['NHS Triage', 'Café — 24/7', 'Санкт-Петербург', 'مستشفى', '東京タワー', 'שלום', 'e\u0301']) assert.equal(firstRefusedCharacter(name), undefined, name);
});

test('look-alikes share a skeleton (UTS #39): Cyrillic and Greek letters, rn and m, invisible characters, composed and decomposed forms', () => {
  const same = [
    ['NHS Triage', 'N\u041DS \u0422riage'],
    ['NHS Triage', '\u039DHS Triage'],
    ['modern', 'rnodern'],
    ['NHS Triage', 'NHS\u200B Triage'],
    ['Café', 'Cafe\u0301'],
    ['paypal', 'p\u0430yp\u0430l'],
  ];
  for (const [a, b] of same) assert.equal(confusableSkeleton(a as string), confusableSkeleton(b as string), `${a} / ${b}`);
  for (const [a, b] of [['NHS Triage', 'NHS Triage 2'], ['Consent', 'Consult']]) assert.notEqual(confusableSkeleton(a as string), confusableSkeleton(b as string));
});

test('mixed scripts are named; one script, with digits, punctuation or combining marks, is not; Japanese and Korean mixes are one writing system', () => {
  assert.deepEqual(mixedScripts('N\u041DS \u0422riage'), ['Latin', 'Cyrillic']);
  assert.deepEqual(mixedScripts('\u039DHS triage'), ['Greek', 'Latin']);
  for (const name of ['NHS Triage 24/7', 'Санкт-Петербург', 'Cafe\u0301', '東京タワー', 'ひらがなカタカナ漢字', '한국어 漢字', '12-34', '']) assert.deepEqual(mixedScripts(name), [], name);
});
