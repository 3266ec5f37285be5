/**
 * RIFF/WAVE handling for the speech engine's output: read the PCM format, give a streamed file its
 * real sizes, and find where the speech starts and ends. Pure; no process, no Fastify.
 */

/** What the `fmt ` and `data` chunks say about a PCM WAV file. */
export type WavInfo = {
  readonly sampleRate: number;
  readonly channels: number;
  readonly bitsPerSample: number;
  /** Bytes per second (`sampleRate × blockAlign`). */
  readonly byteRate: number;
  readonly blockAlign: number;
  /** Offset of the first sample byte. */
  readonly dataOffset: number;
  readonly dataBytes: number;
  /** `dataBytes / byteRate`, in milliseconds. */
  readonly durationMs: number;
};

export class WavFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WavFormatError';
  }
}

const PCM = 1;

type Chunk = { readonly id: string; readonly sizeOffset: number; readonly bodyOffset: number; readonly declaredSize: number };

/** The chunks after `RIFF....WAVE`; a chunk may declare more bytes than the buffer holds (streamed). */
function chunksOf(wav: Buffer): Chunk[] {
  if (wav.length < 12 || wav.toString('latin1', 0, 4) !== 'RIFF' || wav.toString('latin1', 8, 12) !== 'WAVE') {
    throw new WavFormatError('not a RIFF/WAVE file');
  }
  const chunks: Chunk[] = [];
  for (let offset = 12; offset + 8 <= wav.length; ) {
    const chunk = { id: wav.toString('latin1', offset, offset + 4), sizeOffset: offset + 4, bodyOffset: offset + 8, declaredSize: wav.readUInt32LE(offset + 4) };
    chunks.push(chunk);
    if (chunk.id === 'data') break;
    offset = chunk.bodyOffset + chunk.declaredSize + (chunk.declaredSize % 2);
  }
  return chunks;
}

/**
 * Reads a PCM WAV file's format and its audio length. The data chunk's size is taken as declared,
 * so call {@link sealStreamedWav} first on a file written to a pipe.
 */
export function readWavInfo(wav: Buffer): WavInfo {
  const chunks = chunksOf(wav);
  const fmt = chunks.find((chunk) => chunk.id === 'fmt ');
  const data = chunks.find((chunk) => chunk.id === 'data');
  if (!fmt || fmt.declaredSize < 16 || fmt.bodyOffset + 16 > wav.length) throw new WavFormatError('no fmt chunk');
  if (!data) throw new WavFormatError('no data chunk');
  const format = wav.readUInt16LE(fmt.bodyOffset);
  const channels = wav.readUInt16LE(fmt.bodyOffset + 2);
  const sampleRate = wav.readUInt32LE(fmt.bodyOffset + 4);
  const byteRate = wav.readUInt32LE(fmt.bodyOffset + 8);
  const blockAlign = wav.readUInt16LE(fmt.bodyOffset + 12);
  const bitsPerSample = wav.readUInt16LE(fmt.bodyOffset + 14);
  if (format !== PCM) throw new WavFormatError(`audio format ${format} is not PCM`);
  if (channels < 1 || sampleRate < 1 || blockAlign !== (channels * bitsPerSample) / 8 || byteRate !== sampleRate * blockAlign) {
    throw new WavFormatError('inconsistent fmt chunk');
  }
  if (data.bodyOffset + data.declaredSize > wav.length) throw new WavFormatError('the data chunk is longer than the file');
  return {
    sampleRate,
    channels,
    bitsPerSample,
    byteRate,
    blockAlign,
    dataOffset: data.bodyOffset,
    dataBytes: data.declaredSize,
    durationMs: (data.declaredSize / byteRate) * 1000,
  };
}

/**
 * A copy of a WAV file written to a pipe, with its real sizes: a writer that cannot seek back (espeak-ng
 * `--stdout`) leaves placeholder sizes (0x7ffff000…) in the RIFF and data headers. The data chunk is
 * cut to the bytes present, rounded down to whole sample frames; nothing may follow it.
 */
export function sealStreamedWav(wav: Buffer): Buffer {
  const chunks = chunksOf(wav);
  const fmt = chunks.find((chunk) => chunk.id === 'fmt ');
  const data = chunks.find((chunk) => chunk.id === 'data');
  if (!fmt || fmt.bodyOffset + 16 > wav.length || !data) throw new WavFormatError('no fmt or data chunk');
  const blockAlign = Math.max(1, wav.readUInt16LE(fmt.bodyOffset + 12));
  const present = Math.min(data.declaredSize, wav.length - data.bodyOffset);
  const dataBytes = present - (present % blockAlign);
  const sealed = Buffer.from(wav.subarray(0, data.bodyOffset + dataBytes));
  sealed.writeUInt32LE(dataBytes, data.sizeOffset);
  sealed.writeUInt32LE(sealed.length - 8, 4);
  return sealed;
}

/** Frames this long are judged sound or silence together. */
const FRAME_MS = 10;
/** RMS above this (of 32768, about -36 dBFS) is speech rather than the engine's silence. */
const SPEECH_RMS = 500;

/**
 * Where the speech starts and ends, in milliseconds (16-bit PCM, first channel): the first and last
 * 10 ms frame whose RMS passes a fixed threshold. A file with no such frame answers its whole length.
 */
export function speechSpanMs(wav: Buffer, info: WavInfo): { startMs: number; endMs: number } {
  const whole = { startMs: 0, endMs: info.durationMs };
  if (info.bitsPerSample !== 16) return whole;
  const frameBlocks = Math.max(1, Math.round((info.sampleRate * FRAME_MS) / 1000));
  const blocks = Math.floor(info.dataBytes / info.blockAlign);
  let first = -1;
  let last = -1;
  for (let frame = 0; frame * frameBlocks < blocks; frame++) {
    let sum = 0;
    const end = Math.min(blocks, (frame + 1) * frameBlocks);
    for (let block = frame * frameBlocks; block < end; block++) {
      const sample = wav.readInt16LE(info.dataOffset + block * info.blockAlign);
      sum += sample * sample;
    }
    if (Math.sqrt(sum / (end - frame * frameBlocks)) > SPEECH_RMS) {
      if (first < 0) first = frame;
      last = frame;
    }
  }
  if (first < 0) return whole;
  const msOf = (block: number) => (block / info.sampleRate) * 1000;
  return { startMs: msOf(first * frameBlocks), endMs: msOf(Math.min(blocks, (last + 1) * frameBlocks)) };
}
