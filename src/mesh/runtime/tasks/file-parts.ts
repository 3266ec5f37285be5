/**
 * File parts and the media types an agent takes (A2A 1.0 §4.1.6 `Part`: `raw` bytes, a `url`, with
 * `mediaType` and `filename`; v0.3's `{kind: "file", file: {bytes | uri, mimeType, name}}`). An agent
 * declares the media types it takes (`AgentInfo.inputModes`, the card's `defaultInputModes`); a file
 * part of a type it does not declare is refused before any task is made or changed, as
 * §3.3.2's `ContentTypeNotSupportedError` (1.0 methods answer -32005, a2a-v1-wire.ts; the contract's
 * methods -32602, as every invalid param). Text and data parts are `text/plain` and
 * `application/json`, which every agent takes. `raw` bytes are bounded by
 * {@link MESH_FILE_PART_MAX_BYTES}, below the transport's 1 MiB body limit so the answer is a clear
 * JSON-RPC error rather than an HTTP 413. A `url` part is recorded as sent: the runtime never fetches it.
 */
import { MeshRpcError } from '../mesh-errors.ts';
import type { Part } from './task-types.ts';

/** What an agent takes when it declares nothing else: text and JSON (the card's `defaultInputModes`). */
export const DEFAULT_INPUT_MODES: readonly string[] = ['text/plain', 'application/json'];

/** The most bytes one `raw` part may carry, decoded (512 KiB; about 683 KiB of base64). */
export const MESH_FILE_PART_MAX_BYTES = 512 * 1024;

/** A file part without a `mediaType` is opaque bytes. */
export const UNTYPED_FILE_MEDIA_TYPE = 'application/octet-stream';

/** The `reason` of the error data of a part whose media type the agent does not take. */
export const CONTENT_TYPE_NOT_SUPPORTED = 'content_type_not_supported';

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The bare media type (`Image/PNG; x=1` is `image/png`). */
function bareType(mediaType: string): string {
  return mediaType.split(';')[0]!.trim().toLowerCase();
}

/** Whether `modes` (media types, `type/*` and `*\/*` allowed) take `mediaType`. */
export function takesMediaType(modes: readonly string[], mediaType: string): boolean {
  const type = bareType(mediaType);
  return modes.some((mode) => {
    const declared = bareType(mode);
    if (declared === '*/*' || declared === type) return true;
    return declared.endsWith('/*') && type.startsWith(declared.slice(0, -1));
  });
}

/** How many bytes `base64` decodes to (padding counted out). */
export function decodedLength(base64: string): number {
  const padding = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0;
  return Math.floor((base64.length * 3) / 4) - padding;
}

function invalid(pointer: string, reason: string, extra: Record<string, unknown> = {}): MeshRpcError {
  return new MeshRpcError('VALIDATION_ERROR', undefined, { errors: [{ pointer, reason }], ...extra });
}

function checkFilePart(part: Extract<Part, { kind: 'file' }>, pointer: string, modes: readonly string[]): void {
  const { bytes, uri } = part.file;
  if ((bytes === undefined) === (uri === undefined)) throw invalid(`${pointer}/file`, 'a file part has either bytes (raw) or a uri (url)');
  const mediaType = part.file.mimeType || UNTYPED_FILE_MEDIA_TYPE;
  if (!takesMediaType(modes, mediaType)) {
    throw new MeshRpcError('VALIDATION_ERROR', `Content type not supported: this agent does not take ${bareType(mediaType)} parts.`, {
      reason: CONTENT_TYPE_NOT_SUPPORTED,
      mediaType: bareType(mediaType),
      accepted: [...modes],
      errors: [{ pointer, reason: `media type ${bareType(mediaType)} is not among the agent's input modes (${modes.join(', ')})` }],
    });
  }
  if (bytes !== undefined) {
    if (!BASE64.test(bytes) || bytes.length % 4 !== 0) throw invalid(`${pointer}/file/bytes`, 'raw bytes must be standard base64');
    const size = decodedLength(bytes);
    if (size > MESH_FILE_PART_MAX_BYTES) {
      throw invalid(`${pointer}/file/bytes`, `a raw part carries at most ${MESH_FILE_PART_MAX_BYTES} bytes; this one has ${size}`, {
        reason: 'file_part_too_large',
        limit: MESH_FILE_PART_MAX_BYTES,
      });
    }
  } else if (!URL.canParse(uri!)) {
    throw invalid(`${pointer}/file/uri`, 'a url part needs an absolute URL');
  }
}

/** Refuses a message whose file parts the agent does not take, or whose raw bytes are too many or not base64. */
export function checkMessageParts(parts: readonly Part[], modes: readonly string[]): void {
  parts.forEach((part, index) => {
    if (part.kind === 'file') checkFilePart(part, `/message/parts/${index}`, modes);
  });
}

/** A file part as one line of text, for agents that answer in text: `[file report.pdf, application/pdf, 1200 bytes]`. */
export function describeFilePart(part: Extract<Part, { kind: 'file' }>): string {
  const { name, mimeType, bytes, uri } = part.file;
  const size = bytes === undefined ? uri : `${decodedLength(bytes)} bytes`;
  return `[file ${[name, mimeType || UNTYPED_FILE_MEDIA_TYPE, size].filter(Boolean).join(', ')}]`;
}
