/**
 * Running espeak-ng (Debian's `espeak-ng` package) as a separate program, which keeps its GPL code
 * out of this project's. Arguments are an array and the text goes through stdin: no shell ever sees
 * it, and a text starting with `-` cannot become an option. Every run has a time limit and an output
 * limit.
 */
import { spawn } from 'node:child_process';

export type SpeechFailureReason = 'speech_engine_missing' | 'speech_timeout' | 'speech_failed';

/** The engine could not answer: not installed, too slow, or it failed (detail for the log only). */
export class SpeechEngineError extends Error {
  readonly reason: SpeechFailureReason;

  constructor(reason: SpeechFailureReason, detail: string) {
    super(detail);
    this.name = 'SpeechEngineError';
    this.reason = reason;
  }
}

export type EspeakRunOptions = {
  /** The program: a name looked up on PATH, or a path (`ESPEAK_NG_PATH`). */
  readonly path: string;
  readonly timeoutMs: number;
  /** Output beyond this kills the run. */
  readonly maxOutputBytes: number;
};

/** errno codes meaning "there is no program to run there". */
const MISSING = new Set(['ENOENT', 'EACCES', 'ENOTDIR']);

const STDERR_LIMIT = 4096;

/** Runs espeak-ng once with `args`, writes `input` to its stdin, and resolves with its stdout. */
export function runEspeak(options: EspeakRunOptions, args: readonly string[], input: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(options.path, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let size = 0;
    let stderr = '';
    let failure: SpeechEngineError | undefined;
    const stop = (error: SpeechEngineError) => {
      failure ??= error;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => stop(new SpeechEngineError('speech_timeout', `espeak-ng took longer than ${options.timeoutMs} ms`)), options.timeoutMs);
    child.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      const reason = MISSING.has(error.code ?? '') ? 'speech_engine_missing' : 'speech_failed';
      reject(failure ?? new SpeechEngineError(reason, `${options.path}: ${error.message}`));
    });
    child.stdout.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > options.maxOutputBytes) stop(new SpeechEngineError('speech_failed', `espeak-ng wrote more than ${options.maxOutputBytes} bytes`));
      else chunks.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < STDERR_LIMIT) stderr += chunk.toString('utf8').slice(0, STDERR_LIMIT - stderr.length);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (failure) reject(failure);
      else if (code === 0) resolve(Buffer.concat(chunks));
      else reject(new SpeechEngineError('speech_failed', `espeak-ng exited with ${signal ?? code}: ${stderr.trim()}`));
    });
    // A program that exits before reading everything closes the pipe; its exit status tells the story.
    child.stdin.on('error', () => undefined);
    child.stdin.end(input, 'utf8');
  });
}
