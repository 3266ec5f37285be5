/**
 * Speech synthesis for `POST /tts` (contract §10; docs/avatar.md, "Speech"): a real WAV of the text
 * and a viseme timeline inside it. Two espeak-ng runs side by side: the audio of the whole text, and
 * the phoneme transcription of each word (one word per line) that the timeline is built from.
 */
import { runEspeak, SpeechEngineError, type EspeakRunOptions } from './espeak.ts';
import { phonemesPerToken, speechText, speechTokens, timelineWords } from './spoken-words.ts';
import { visemeTimeline, type VisemeCue } from './visemes.ts';
import { readWavInfo, sealStreamedWav, speechSpanMs, WavFormatError } from './wav.ts';

export type SpeechResult = {
  /** A PCM WAV file with correct sizes. */
  readonly wav: Buffer;
  readonly durationMs: number;
  readonly visemes: VisemeCue[];
};

/** Runs espeak-ng for `text` in `voice` (an id from voices.ts; the caller checks it). */
export async function synthesizeSpeech(text: string, voice: string, engine: EspeakRunOptions): Promise<SpeechResult> {
  const tokens = speechTokens(text);
  const common = ['-v', voice, '-b', '1'];
  const [streamed, transcription] = await Promise.all([
    runEspeak(engine, [...common, '--stdin', '--stdout'], speechText(text)),
    // Without --stdin, espeak-ng reads line by line and answers each line on its own line.
    runEspeak(engine, [...common, '-q', '-x', '--sep=|'], `${tokens.join('\n')}\n`),
  ]);
  let wav: Buffer;
  let info;
  try {
    wav = sealStreamedWav(streamed);
    info = readWavInfo(wav);
  } catch (error) {
    if (error instanceof WavFormatError) throw new SpeechEngineError('speech_failed', `espeak-ng wrote no usable WAV: ${error.message}`);
    throw error;
  }
  const words = timelineWords(tokens, phonemesPerToken(transcription.toString('utf8'), tokens.length));
  return { wav, durationMs: info.durationMs, visemes: visemeTimeline(words, speechSpanMs(wav, info)) };
}
