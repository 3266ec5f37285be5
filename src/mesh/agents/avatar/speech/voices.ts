/**
 * The voices `POST /tts` accepts (docs/avatar.md, "Speech"): a fixed allow-list of espeak-ng voices
 * shipped by Debian's `espeak-ng-data`, so a request can never name an arbitrary file or option.
 */

export type SpeechVoice = {
  /** What a request names, and the `-v` argument espeak-ng gets. */
  readonly id: string;
  readonly name: string;
  /** BCP 47 tag of the accent. */
  readonly language: string;
  readonly gender: 'female' | 'male';
};

export const SPEECH_VOICES: readonly SpeechVoice[] = [
  { id: 'en-gb', name: 'British English', language: 'en-GB', gender: 'male' },
  { id: 'en-gb+f3', name: 'British English (female)', language: 'en-GB', gender: 'female' },
  { id: 'en-us', name: 'American English', language: 'en-US', gender: 'male' },
  { id: 'en-us+f3', name: 'American English (female)', language: 'en-US', gender: 'female' },
  { id: 'en-gb-scotland', name: 'Scottish English', language: 'en-GB-scotland', gender: 'male' },
  { id: 'en-gb-x-rp', name: 'Received Pronunciation', language: 'en-GB', gender: 'male' },
];

export const SPEECH_VOICE_IDS = SPEECH_VOICES.map((voice) => voice.id);

/** The voice used when a request names none. */
export const DEFAULT_SPEECH_VOICE = 'en-gb';
