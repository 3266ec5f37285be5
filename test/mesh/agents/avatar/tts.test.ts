/**
 * Speech (contract §10): `POST /tts` and `GET /tts/voices` on a real avatar agent, with the real
 * espeak-ng program. The WAV is decoded here from its bytes, independently of the agent's own code.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { systemClock } from '../../../../src/core/clock.ts';
import { createAvatarAgent, type AvatarAgentOptions } from '../../../../src/mesh/agents/avatar/avatar-agent.ts';
import { issueMeshToken } from '../../../../src/mesh/runtime/auth.ts';
import { CALLER, SECRET, authHeaders, listenAgent, meshConfig, post, tempDir, token } from '../../helpers.ts';
import { settles } from '../../../helpers/eventually.ts';

/** The documented viseme classes (docs/avatar.md, "Visemes"). */
const VISEME_CLASSES = new Set(['sil', 'PP', 'FF', 'TH', 'DD', 'kk', 'CH', 'SS', 'nn', 'RR', 'aa', 'E', 'I', 'O', 'U']);

const ESPEAK_INSTALLED = spawnSync('espeak-ng', ['--version']).status === 0;
const NEEDS_ESPEAK = ESPEAK_INSTALLED ? {} : { skip: 'espeak-ng is not installed (apt-get install espeak-ng); .ci/run installs it' };

async function avatar(t: TestContext, options: { env?: Record<string, string>; speech?: AvatarAgentOptions['speech'] } = {}) {
  const config = meshConfig(t, options.env);
  return listenAgent(t, createAvatarAgent({ config, clock: systemClock, ...(options.speech ? { speech: options.speech } : {}) }), { config });
}

async function tts(url: string, body: unknown, headers?: Record<string, string>) {
  return post(new URL('tts', url).href, body, headers ?? (await authHeaders()));
}

type Wav = { sampleRate: number; channels: number; bitsPerSample: number; durationMs: number; rms: number };

/** Decodes a RIFF/WAVE PCM file: header, sizes, duration, and the RMS of its samples. */
function decodeWav(bytes: Buffer): Wav {
  assert.equal(bytes.toString('latin1', 0, 4), 'RIFF');
  assert.equal(bytes.readUInt32LE(4), bytes.length - 8, 'the RIFF size is the real one');
  assert.equal(bytes.toString('latin1', 8, 12), 'WAVE');
  let offset = 12;
  let format: { audioFormat: number; channels: number; sampleRate: number; byteRate: number; blockAlign: number; bitsPerSample: number } | undefined;
  for (;;) {
    assert.ok(offset + 8 <= bytes.length, 'a data chunk');
    const id = bytes.toString('latin1', offset, offset + 4);
    const size = bytes.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ') {
      format = {
        audioFormat: bytes.readUInt16LE(body),
        channels: bytes.readUInt16LE(body + 2),
        sampleRate: bytes.readUInt32LE(body + 4),
        byteRate: bytes.readUInt32LE(body + 8),
        blockAlign: bytes.readUInt16LE(body + 12),
        bitsPerSample: bytes.readUInt16LE(body + 14),
      };
    }
    if (id === 'data') {
      assert.ok(format, 'fmt comes before data');
      assert.equal(format.audioFormat, 1, 'PCM');
      assert.equal(body + size, bytes.length, 'the data size is the real one');
      assert.equal(format.byteRate, format.sampleRate * format.blockAlign);
      let sum = 0;
      const samples = size / format.blockAlign;
      for (let index = 0; index < samples; index++) sum += bytes.readInt16LE(body + index * format.blockAlign) ** 2;
      return { ...format, durationMs: (size / format.byteRate) * 1000, rms: Math.sqrt(sum / samples) };
    }
    offset = body + size + (size % 2);
  }
}

/** Timeline checks common to every synthesis: order, no overlap, inside the audio, documented classes. */
function assertTimeline(visemes: { word: string; start_ms: number; end_ms: number; viseme: string }[], durationMs: number) {
  assert.ok(visemes.length > 0);
  visemes.forEach((cue, index) => {
    assert.ok(Number.isInteger(cue.start_ms) && Number.isInteger(cue.end_ms));
    assert.ok(cue.start_ms >= 0 && cue.start_ms < cue.end_ms && cue.end_ms <= durationMs, JSON.stringify(cue));
    assert.ok(VISEME_CLASSES.has(cue.viseme), cue.viseme);
    if (index > 0) assert.ok(cue.start_ms >= (visemes[index - 1]?.end_ms ?? 0), 'in order, not overlapping');
  });
}

/** The words the timeline names, one per run of cues. */
const wordsOf = (visemes: { word: string }[]) => visemes.map((cue) => cue.word).filter((word, index, all) => index === 0 || all[index - 1] !== word);

describe('speech: POST /tts', NEEDS_ESPEAK, () => {
  test('speaks the text as a real WAV with a viseme timeline inside it, one word at least per word', async (t) => {
    const { url } = await avatar(t);
    const text = 'Where exactly is the pain, and when did it start?';
    const answer = await tts(url, { text, voice: 'en-gb' });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('cache-control'), 'no-store');
    assert.equal(answer.body.mime_type, 'audio/wav');
    assert.equal(answer.body.voice, 'en-gb');
    const wav = decodeWav(Buffer.from(answer.body.audio_b64, 'base64'));
    assert.deepEqual([wav.channels, wav.bitsPerSample, wav.sampleRate], [1, 16, 22050]);
    const words = text.split(' ').length;
    assert.ok(wav.durationMs > words * 150 && wav.durationMs < words * 900, `${wav.durationMs} ms for ${words} words`);
    assert.ok(wav.rms > 500, `RMS ${wav.rms}: not silence`);
    assert.equal(answer.body.duration_ms, Math.round(wav.durationMs));
    assertTimeline(answer.body.visemes, wav.durationMs);
    assert.deepEqual(wordsOf(answer.body.visemes), ['Where', 'exactly', 'is', 'the', 'pain', 'and', 'when', 'did', 'it', 'start']);
    const distinct = new Set(answer.body.visemes.map((cue: { viseme: string }) => cue.viseme));
    assert.ok(distinct.size >= 5, 'the mouth moves through several shapes');
  });

  test('a longer text gives a longer WAV; the voice can be chosen and defaults to en-gb', async (t) => {
    const { url } = await avatar(t);
    const short = await tts(url, { text: 'Hello.' });
    assert.equal(short.body.voice, 'en-gb');
    const long = await tts(url, { text: 'Hello. Thank you for telling me; I have noted that you mentioned nausea and a fever since yesterday.', voice: 'en-us+f3' });
    assert.equal(long.status, 200);
    assert.equal(long.body.voice, 'en-us+f3');
    const shortWav = decodeWav(Buffer.from(short.body.audio_b64, 'base64'));
    const longWav = decodeWav(Buffer.from(long.body.audio_b64, 'base64'));
    assert.ok(longWav.durationMs > shortWav.durationMs * 3, `${longWav.durationMs} vs ${shortWav.durationMs}`);
    assertTimeline(long.body.visemes, longWav.durationMs);
    assert.equal(wordsOf(long.body.visemes).length, 18);
  });

  test('shell metacharacters and option-like words are spoken literally: nothing runs, nothing is written', async (t) => {
    const { url } = await avatar(t);
    const dir = tempDir(t);
    const text = `$(touch ${dir}/a) \`touch ${dir}/b\` ; touch ${dir}/c && echo x > ${dir}/d | -w ${dir}/e.wav --stdout`;
    const answer = await tts(url, { text });
    assert.equal(answer.status, 200);
    assert.deepEqual(readdirSync(dir), [], 'no command ran and no option was taken');
    const wav = decodeWav(Buffer.from(answer.body.audio_b64, 'base64'));
    assert.ok(wav.durationMs > 3000, 'the whole text was spoken');
    assertTimeline(answer.body.visemes, wav.durationMs);
    const tokens = text.split(' ').map((token) => token.replace(/^\p{P}+|\p{P}+$/gu, '') || token);
    const spoken = wordsOf(answer.body.visemes);
    let next = 0;
    for (const word of spoken) {
      next = tokens.indexOf(word, next) + 1;
      assert.ok(next > 0, `${word} is a word of the text, in order`);
    }
    for (const word of ['touch', 'echo', 'w', 'stdout']) assert.ok(spoken.includes(word), `${word} was spoken`);
  });

  test('no or bad credentials: 401 with -32001, as on the JSON-RPC endpoint', async (t) => {
    const { url } = await avatar(t);
    const body = { text: 'hello' };
    const json = { 'content-type': 'application/json' };
    const forged = await token(CALLER, { secret: 'not-the-mesh-secret-at-all-000000' });
    const expired = await issueMeshToken({ secret: SECRET, sub: CALLER, ttlSeconds: 60, clock: { now: () => new Date(Date.now() - 600_000) } });
    const cases: readonly [string, Record<string, string>, string][] = [
      ['none', json, 'missing_token'],
      ['forged', { ...json, authorization: `Bearer ${forged}`, 'x-agent-id': CALLER }, 'bad_signature'],
      ['expired', { ...json, authorization: `Bearer ${expired}`, 'x-agent-id': CALLER }, 'expired'],
      ['someone else', { ...json, authorization: `Bearer ${await token()}`, 'x-agent-id': 'did:web:localhost:agents:other' }, 'agent_id_mismatch'],
    ];
    for (const [name, headers, reason] of cases) {
      const answer = await tts(url, body, headers);
      assert.equal(answer.status, 401, name);
      assert.equal(answer.headers.get('www-authenticate'), 'Bearer error="invalid_token"');
      assert.equal(answer.body.jsonrpc, '2.0');
      assert.equal(answer.body.id, null);
      assert.equal(answer.body.error.code, -32001, name);
      assert.equal(answer.body.error.data.reason, reason, name);
      assert.equal(answer.body.audio_b64, undefined);
    }
    const voices = await fetch(new URL('tts/voices', url));
    assert.equal(voices.status, 401);
  });

  test('bad bodies are refused with -32602 naming the field (400), too long a text with 413', async (t) => {
    const { url } = await avatar(t);
    const cases: readonly [unknown, string][] = [
      [{ text: 5 }, '/text'],
      [{ text: ['hello'] }, '/text'],
      [{ voice: 'en-gb' }, '/'],
      [{ text: '' }, '/text'],
      [{ text: '   \n\t ' }, '/text'],
      [{ text: 'hello', voice: 7 }, '/voice'],
      [{ text: 'hello', speed: 300 }, '/'],
      [[], '/'],
    ];
    for (const [body, pointer] of cases) {
      const answer = await tts(url, body);
      assert.equal(answer.status, 400, JSON.stringify(body));
      assert.equal(answer.body.error.code, -32602);
      assert.ok(answer.body.error.data.errors.some((error: { pointer: string }) => error.pointer === pointer), JSON.stringify(answer.body.error));
    }
    const unknownVoice = await tts(url, { text: 'hello', voice: 'klingon' });
    assert.equal(unknownVoice.status, 400);
    assert.deepEqual(unknownVoice.body.error.data.errors, [
      { pointer: '/voice', reason: 'must be equal to one of the allowed values: en-gb, en-gb+f3, en-us, en-us+f3, en-gb-scotland, en-gb-x-rp' },
    ]);
    const tooLong = await tts(url, { text: 'word '.repeat(200) + 'x' });
    assert.equal(tooLong.status, 413);
    assert.equal(tooLong.body.error.code, -32602);
    assert.equal(tooLong.body.error.data.max_chars, 1000);
    assert.equal(tooLong.body.error.data.errors[0].pointer, '/text');
    const notJson = await tts(url, '{"text": "hello"');
    assert.equal(notJson.status, 400);
    assert.equal(notJson.body.error.code, -32700);
    assert.equal((await tts(url, { text: 'x'.repeat(1000) })).status, 200, 'exactly the limit is spoken');
  });
});

describe('speech: engine problems and voices', () => {
  test('without espeak-ng: 503 in the same envelope, with an install hint', async (t) => {
    const { url } = await avatar(t, { env: { ESPEAK_NG_PATH: '/nonexistent/espeak-ng' } });
    const answer = await tts(url, { text: 'hello' });
    assert.equal(answer.status, 503);
    assert.equal(answer.body.jsonrpc, '2.0');
    assert.equal(answer.body.error.code, -32011);
    assert.equal(answer.body.error.data.reason, 'speech_engine_missing');
    assert.match(answer.body.error.data.hint, /apt-get install espeak-ng/);
  });

  test('an engine that hangs is stopped at the time limit (503), one that fails is a bare 500', async (t) => {
    const dir = tempDir(t);
    const hang = join(dir, 'hang.sh');
    // It sleeps ten minutes: were it waited for, the safety net (20 s) would fail the test.
    writeFileSync(hang, '#!/bin/sh\nexec sleep 600\n');
    chmodSync(hang, 0o755);
    const slow = await avatar(t, { speech: { path: hang, timeoutMs: 200 } });
    const timedOut = await settles(tts(slow.url, { text: 'hello' }), 'the hung process was waited for');
    assert.equal(timedOut.status, 503);
    assert.equal(timedOut.body.error.data.reason, 'speech_timeout');
    const broken = await avatar(t, { speech: { path: '/bin/false' } });
    const failed = await tts(broken.url, { text: 'hello' });
    assert.equal(failed.status, 500);
    assert.deepEqual(failed.body.error, { code: -32603, message: 'Internal error' });
  });

  test('at most two syntheses run at once and eight wait; beyond that 503 speech_busy with Retry-After', async (t) => {
    const dir = tempDir(t);
    const hang = join(dir, 'hang.sh');
    writeFileSync(hang, '#!/bin/sh\nexec sleep 30\n');
    chmodSync(hang, 0o755);
    const slow = await avatar(t, { speech: { path: hang, timeoutMs: 1500 } });
    const answers = await Promise.all(Array.from({ length: 12 }, () => tts(slow.url, { text: 'hello' })));
    const reasons = answers.map((answer) => answer.body.error.data.reason).sort();
    assert.deepEqual(reasons.filter((reason) => reason === 'speech_busy').length, 2, JSON.stringify(reasons));
    assert.deepEqual(reasons.filter((reason) => reason === 'speech_timeout').length, 10);
  });

  test('GET /tts/voices lists the allowed voices, the default and the text limit', async (t) => {
    const { url } = await avatar(t);
    const response = await fetch(new URL('tts/voices', url), { headers: await authHeaders() });
    assert.equal(response.status, 200);
    const body: any = await response.json();
    assert.deepEqual(body.voices.map((voice: { id: string }) => voice.id), ['en-gb', 'en-gb+f3', 'en-us', 'en-us+f3', 'en-gb-scotland', 'en-gb-x-rp']);
    assert.ok(body.voices.every((voice: Record<string, unknown>) => voice.name && voice.language && ['female', 'male'].includes(voice.gender as string)));
    assert.equal(body.default_voice, 'en-gb');
    assert.equal(body.max_text_chars, 1000);
  });

  test('every listed voice speaks', NEEDS_ESPEAK, async (t) => {
    const { url } = await avatar(t);
    const body: any = await (await fetch(new URL('tts/voices', url), { headers: await authHeaders() })).json();
    for (const voice of body.voices) {
      const answer = await tts(url, { text: 'Good morning.', voice: voice.id });
      assert.equal(answer.status, 200, voice.id);
      assert.ok(decodeWav(Buffer.from(answer.body.audio_b64, 'base64')).rms > 500, voice.id);
    }
  });
});
