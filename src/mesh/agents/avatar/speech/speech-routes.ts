/**
 * `POST /tts` and `GET /tts/voices` on the avatar agent (contract §10; docs/avatar.md, "Speech"),
 * added through the runtime's `routes` hook. Both take the same mesh credentials as JSON-RPC, checked
 * by the runtime's own `meshAuthenticate`; failures are the agent's JSON-RPC error envelope
 * (`id: null`) with an HTTP status that says what happened.
 */
import { authChallenge } from '../../../../core/http/auth-challenge.ts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { Compile } from 'typebox/compile';
import type { MeshConfig } from '../../../mesh-config.ts';
import { failure } from '../../../runtime/jsonrpc.ts';
import { isMeshRpcError, meshErrorObject, type MeshErrorName } from '../../../runtime/mesh-errors.ts';
import { SpeechEngineError, type EspeakRunOptions } from './espeak.ts';
import { speechTokens } from './spoken-words.ts';
import { synthesizeSpeech } from './synthesize.ts';
import { DEFAULT_SPEECH_VOICE, SPEECH_VOICE_IDS, SPEECH_VOICES } from './voices.ts';

/** Longest text one request may ask for (about a minute of speech, a 2.6 MB WAV). */
export const MAX_TTS_TEXT_CHARS = 1000;
/** Time limit of one espeak-ng run. */
export const TTS_TIMEOUT_MS = 10_000;
const MAX_WAV_BYTES = 16 * 1024 * 1024;
/** Syntheses at once (each is two processes); more waiting than this are refused, retryable, not queued without end. */
export const TTS_CONCURRENCY = 2;
export const TTS_MAX_WAITING = 8;

export const INSTALL_HINT = 'Install the speech engine: apt-get install espeak-ng (or point ESPEAK_NG_PATH at it).';

const TtsBody = Type.Object(
  {
    text: Type.String({ minLength: 1 }),
    // An enum, so an unknown voice gets one error listing the allowed ones.
    voice: Type.Optional(Type.Enum(SPEECH_VOICE_IDS)),
  },
  { additionalProperties: false },
);
const checkTtsBody = Compile(TtsBody);

export type SpeechRouteOptions = {
  readonly config: MeshConfig;
  /** Overrides of the engine settings (tests); default `ESPEAK_NG_PATH` and the limits above. */
  readonly engine?: Partial<EspeakRunOptions>;
};

/** The agent's error envelope with an HTTP status. */
function refuse(reply: FastifyReply, status: number, errorName: MeshErrorName, message?: string, data?: unknown) {
  return reply.code(status).type('application/json').header('cache-control', 'no-store').send(failure(null, meshErrorObject(errorName, message, data)));
}

function reasonOf(error: { message: string; params?: unknown }): string {
  const allowed = (error.params as { allowedValues?: unknown } | undefined)?.allowedValues;
  return Array.isArray(allowed) ? `${error.message}: ${allowed.join(', ')}` : error.message;
}

/** Adds `POST /tts` and `GET /tts/voices` to the avatar agent's app. */
export function registerSpeechRoutes(app: FastifyInstance, options: SpeechRouteOptions): void {
  const { config } = options;
  const engine: EspeakRunOptions = { path: config.ESPEAK_NG_PATH, timeoutMs: TTS_TIMEOUT_MS, maxOutputBytes: MAX_WAV_BYTES, ...options.engine };
  // The runtime's own check (the ward-mesh-transport plugin), so the same credentials and DID resolver.
  if (!app.hasDecorator('meshAuthenticate')) throw new Error('registerSpeechRoutes needs the ward-mesh-transport plugin (an agent app from buildAgentApp)');
  const authenticate = app.meshAuthenticate;

  /** The runtime's checks, in its order: the token, then (DID_VERIFY) the body signature. Undefined once refused. */
  const authenticated = async (request: FastifyRequest, reply: FastifyReply, body?: Buffer): Promise<true | undefined> => {
    try {
      await authenticate(request.headers, body);
      return true;
    } catch (error) {
      if (!isMeshRpcError(error)) throw error;
      reply.header('www-authenticate', authChallenge({ scheme: 'Bearer', error: 'invalid_token' }));
      await refuse(reply, error.httpStatus, error.errorName, error.message, error.data);
      return undefined;
    }
  };

  app.get('/tts/voices', async (request, reply) => {
    if (!(await authenticated(request, reply))) return reply;
    return { voices: SPEECH_VOICES, default_voice: DEFAULT_SPEECH_VOICE, max_text_chars: MAX_TTS_TEXT_CHARS, mime_type: 'audio/wav' };
  });

  app.post('/tts', async (request, reply) => {
    const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    if (!(await authenticated(request, reply, raw))) return reply;
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return refuse(reply, 400, 'PARSE_ERROR', 'The body is not JSON', { reason: 'invalid_json' });
    }
    if (!checkTtsBody.Check(body)) {
      const errors = checkTtsBody.Errors(body).slice(0, 10).map((error) => ({ pointer: error.instancePath || '/', reason: reasonOf(error) }));
      return refuse(reply, 400, 'VALIDATION_ERROR', undefined, { errors });
    }
    const { text, voice = DEFAULT_SPEECH_VOICE } = body;
    if (text.length > MAX_TTS_TEXT_CHARS) {
      const errors = [{ pointer: '/text', reason: `must NOT have more than ${MAX_TTS_TEXT_CHARS} characters` }];
      return refuse(reply, 413, 'VALIDATION_ERROR', 'The text is too long to speak in one request', { errors, max_chars: MAX_TTS_TEXT_CHARS });
    }
    if (speechTokens(text).length === 0) {
      return refuse(reply, 400, 'VALIDATION_ERROR', undefined, { errors: [{ pointer: '/text', reason: 'must contain something to speak' }] });
    }
    if (running >= TTS_CONCURRENCY && waiting.length >= TTS_MAX_WAITING) {
      reply.header('retry-after', '1');
      return refuse(reply, 503, 'AGENT_UNAVAILABLE', 'The speech engine is busy; retry shortly', { reason: 'speech_busy', retryable: true });
    }
    await slot();
    try {
      const speech = await synthesizeSpeech(text, voice, engine);
      reply.header('cache-control', 'no-store');
      return { audio_b64: speech.wav.toString('base64'), visemes: speech.visemes, voice, mime_type: 'audio/wav', duration_ms: Math.round(speech.durationMs) };
    } catch (error) {
      if (!(error instanceof SpeechEngineError)) throw error;
      if (error.reason === 'speech_engine_missing') {
        return refuse(reply, 503, 'AGENT_UNAVAILABLE', 'No speech engine is installed', { reason: error.reason, hint: INSTALL_HINT });
      }
      request.log.error({ err: error }, 'speech synthesis failed');
      if (error.reason === 'speech_timeout') return refuse(reply, 503, 'AGENT_UNAVAILABLE', 'The speech engine did not answer in time', { reason: error.reason });
      return refuse(reply, 500, 'INTERNAL_ERROR');
    } finally {
      release();
    }
  });

  // A small counting semaphore: each synthesis runs two espeak-ng processes on a 2-core machine.
  let running = 0;
  const waiting: Array<() => void> = [];
  function slot(): Promise<void> {
    if (running < TTS_CONCURRENCY) {
      running += 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => waiting.push(resolve));
  }
  function release(): void {
    const next = waiting.shift();
    if (next) next();
    else running -= 1;
  }
}
