import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { readWavInfo, sealStreamedWav, speechSpanMs, WavFormatError } from '../../../../src/mesh/agents/avatar/speech/wav.ts';

const RATE = 22050;

/** A mono 16-bit PCM WAV with the given samples; `streamed` writes the placeholder sizes a pipe gets. */
function wav(samples: readonly number[], options: { streamed?: boolean; trailingByte?: boolean } = {}): Buffer {
  const data = Buffer.alloc(samples.length * 2 + (options.trailingByte ? 1 : 0));
  samples.forEach((sample, index) => data.writeInt16LE(sample, index * 2));
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(options.streamed ? 0x7ffff024 : 36 + data.length, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(RATE, 24);
  header.writeUInt32LE(RATE * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(options.streamed ? 0x7ffff000 : data.length, 40);
  return Buffer.concat([header, data]);
}

const silence = (ms: number) => new Array<number>(Math.round((RATE * ms) / 1000)).fill(0);
const tone = (ms: number) => Array.from({ length: Math.round((RATE * ms) / 1000) }, (_, index) => Math.round(8000 * Math.sin(index / 5)));

describe('WAV handling', () => {
  test('a streamed WAV (placeholder sizes) is sealed with its real RIFF and data sizes', () => {
    const streamed = wav(tone(100), { streamed: true, trailingByte: true });
    assert.throws(() => readWavInfo(streamed), WavFormatError, 'the placeholder size is longer than the file');
    const sealed = sealStreamedWav(streamed);
    assert.equal(sealed.readUInt32LE(4), sealed.length - 8);
    const info = readWavInfo(sealed);
    assert.equal(info.dataBytes, 2 * Math.round(RATE / 10), 'cut to whole sample frames');
    assert.equal(sealed.length, 44 + info.dataBytes);
    assert.deepEqual([info.sampleRate, info.channels, info.bitsPerSample, info.byteRate], [RATE, 1, 16, RATE * 2]);
    assert.ok(Math.abs(info.durationMs - 100) < 0.1);
  });

  test('a file that is not PCM RIFF/WAVE is refused', () => {
    assert.throws(() => readWavInfo(Buffer.from('not a wav file at all')), WavFormatError);
    const float = wav(tone(10));
    float.writeUInt16LE(3, 20);
    assert.throws(() => readWavInfo(float), /not PCM/);
    assert.throws(() => sealStreamedWav(Buffer.from('RIFF\0\0\0\0WAVE')), WavFormatError);
  });

  test('the speech span skips the silence before and after the sound', () => {
    const file = wav([...silence(200), ...tone(500), ...silence(300)]);
    const span = speechSpanMs(file, readWavInfo(file));
    assert.ok(Math.abs(span.startMs - 200) <= 10, String(span.startMs));
    assert.ok(Math.abs(span.endMs - 700) <= 10, String(span.endMs));
  });

  test('a silent file spans its whole length', () => {
    const file = wav(silence(250));
    const info = readWavInfo(file);
    assert.deepEqual(speechSpanMs(file, info), { startMs: 0, endMs: info.durationMs });
  });
});
