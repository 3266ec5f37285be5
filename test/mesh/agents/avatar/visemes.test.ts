import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import {
  CLAUSE_PAUSE_UNITS,
  phonemesPerToken,
  SENTENCE_PAUSE_UNITS,
  speechTokens,
  timelineWords,
  wordOf,
} from '../../../../src/mesh/agents/avatar/speech/spoken-words.ts';
import { letterVisemes, phonemeViseme, VISEMES, visemeTimeline, type TimelineWord } from '../../../../src/mesh/agents/avatar/speech/visemes.ts';

describe('visemes', () => {
  test('espeak-ng phoneme mnemonics map to the documented classes', () => {
    const table: readonly [string, string | undefined][] = [
      ['p', 'PP'], ['b', 'PP'], ['m', 'PP'], ['f', 'FF'], ['v', 'FF'], ['T', 'TH'], ['D', 'TH'],
      ['t', 'DD'], ['d', 'DD'], ['k', 'kk'], ['g', 'kk'], ['N', 'kk'], ['h', 'kk'],
      ['tS', 'CH'], ['dZ', 'CH'], ['S', 'CH'], ['Z', 'CH'], ['s', 'SS'], ['z', 'SS'],
      ['n', 'nn'], ['l', 'nn'], ['r', 'RR'], ['w', 'U'], ['j', 'I'],
      ["'a", 'aa'], ['A:', 'aa'], ['V', 'aa'], ["'aI", 'aa'], ['E', 'E'], ["'e@", 'E'], ['@', 'E'], ['3:', 'E'],
      ['I', 'I'], [',i:', 'I'], ['I2', 'I'], ['0', 'O'], ["'O:", 'O'], ['oU', 'O'], ['U', 'U'], ['u:', 'U'],
      ['_:', undefined], ['_!', undefined], [';', undefined], ['_:b', 'PP'], ['C', 'DD'],
    ]; // prettier-ignore
    for (const [mnemonic, viseme] of table) assert.equal(phonemeViseme(mnemonic), viseme, mnemonic);
  });

  test('docs/avatar.md documents exactly the viseme set the code uses', () => {
    const docs = readFileSync(new URL('../../../../docs/avatar.md', import.meta.url), 'utf8');
    const rows = [...docs.matchAll(/^\| `([A-Za-z]+)` \|/gm)].map((match) => match[1]);
    assert.deepEqual(rows, [...VISEMES]);
  });

  test('the letter fallback gives one class per letter or digit', () => {
    assert.deepEqual(letterVisemes('Bob!'), ['PP', 'O', 'PP']);
    assert.deepEqual(letterVisemes('café'), ['kk', 'aa', 'FF', 'E']);
    assert.deepEqual(letterVisemes('—'), []);
  });

  test('the timeline is ordered, never overlaps, stays in the span and covers every word', () => {
    const words: TimelineWord[] = [
      { word: 'where', visemes: ['U', 'E'], pauseAfter: 0 },
      { word: 'is', visemes: ['I', 'SS'], pauseAfter: 0 },
      { word: 'it', visemes: ['I', 'DD'], pauseAfter: SENTENCE_PAUSE_UNITS },
    ];
    const cues = visemeTimeline(words, { startMs: 100.4, endMs: 1000.9 });
    assert.deepEqual(cues.map((cue) => cue.word), ['where', 'where', 'is', 'is', 'it', 'it'], 'no pause after the last word');
    assert.equal(cues[0]?.start_ms, 100);
    assert.equal(cues.at(-1)?.end_ms, 1000);
    cues.forEach((cue, index) => {
      assert.ok(cue.start_ms < cue.end_ms);
      if (index > 0) assert.ok(cue.start_ms >= (cues[index - 1]?.end_ms ?? 0));
    });
  });

  test('equal visemes in a row within a word are one cue, and a pause leaves a gap', () => {
    const cues = visemeTimeline(
      [
        { word: 'too', visemes: ['DD', 'U', 'U'], pauseAfter: CLAUSE_PAUSE_UNITS },
        { word: 'bad', visemes: ['PP', 'aa', 'DD'], pauseAfter: 0 },
      ],
      { startMs: 0, endMs: 800 },
    );
    assert.deepEqual(cues, [
      { word: 'too', start_ms: 0, end_ms: 100, viseme: 'DD' },
      { word: 'too', start_ms: 100, end_ms: 300, viseme: 'U' },
      { word: 'bad', start_ms: 500, end_ms: 600, viseme: 'PP' },
      { word: 'bad', start_ms: 600, end_ms: 700, viseme: 'aa' },
      { word: 'bad', start_ms: 700, end_ms: 800, viseme: 'DD' },
    ]);
  });

  test('no words, no timeline', () => {
    assert.deepEqual(visemeTimeline([], { startMs: 0, endMs: 100 }), []);
  });
});

describe('words of a spoken text', () => {
  test('tokens split at whitespace; control characters never reach the engine', () => {
    assert.deepEqual(speechTokens('  Hello,\tthere\u0000now\n '), ['Hello,', 'there', 'now']);
  });

  test('a word on the timeline is its token without surrounding punctuation', () => {
    assert.deepEqual(['there,', '"quoted"', 'today?', '...', '$(whoami);'].map(wordOf), ['there', 'quoted', 'today', '...', '$(whoami']);
  });

  test('one transcription line per token is read back; any other count is refused', () => {
    const output = "h|@|l|'oU\nD|'e@\n\n_|'a|n|d\n";
    assert.deepEqual(phonemesPerToken(output, 4), [['h', '@', 'l', "'oU"], ['D', "'e@"], [], ['_', "'a", 'n', 'd']]);
    assert.equal(phonemesPerToken(output, 3), undefined);
  });

  test('a token with nothing to say is no word, and its pause joins the previous word', () => {
    const words = timelineWords(['Well', '—', 'yes.', 'Fine'], [['w', 'E', 'l'], [], ['j', 'E', 's'], ['f', 'aI', 'n']]);
    assert.deepEqual(words.map((word) => [word.word, word.pauseAfter]), [['Well', CLAUSE_PAUSE_UNITS], ['yes', SENTENCE_PAUSE_UNITS], ['Fine', 0]]);
  });

  test('without a usable transcription the words come from their letters', () => {
    const words = timelineWords(['Hi', '...', 'Bob'], undefined);
    assert.deepEqual(words.map((word) => [word.word, word.visemes]), [['Hi', ['kk', 'I']], ['Bob', ['PP', 'O', 'PP']]]);
  });
});
