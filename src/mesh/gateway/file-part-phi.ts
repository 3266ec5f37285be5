/**
 * The PHI guard's reading of file parts (decision 85, docs/mesh.md "File parts"). A message part's
 * base64 bytes (1.0 `raw`, v0.3 `file.bytes`) are a whole file, not a run inside a text: the general
 * scan decodes base64 runs only when they read as text with digits (core/phi/normalise.ts), so a
 * name beside a condition, base64-encoded, would pass it. The gateway decodes each part whole: bytes
 * that are UTF-8 text are scanned as a text at the part's pointer (JSON in it as JSON); bytes that are
 * not text (an image, a PDF) are something the guard cannot read, and are refused: the guard fails
 * closed, as it does for what it cannot parse. Deployments that carry binary files between agents
 * they trust turn the guard off (`GATEWAY_PHI_GUARD=false`).
 */
import { scanForPhi, type PhiFinding } from '../../core/phi/index.ts';

const escapePointerToken = (token: string) => token.replace(/~/g, '~0').replace(/\//g, '~1');
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const MAX_DEPTH = 64;
const decoder = new TextDecoder('utf-8', { fatal: true });

/** Text may hold tabs and line breaks; any other C0 control, or DEL, means binary. */
function hasControl(text: string): boolean {
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if ((code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) || code === 0x7f) return true;
  }
  return false;
}

/** What the guard makes of the file parts in a body: PHI found in them, and the parts it cannot read. */
export type FilePartReading = { readonly findings: PhiFinding[]; readonly unreadable: string[] };

function fileBytesOf(part: unknown): { bytes: string; pointer: string } | undefined {
  if (typeof part !== 'object' || part === null) return undefined;
  const { raw, file } = part as { raw?: unknown; file?: { bytes?: unknown } };
  if (typeof raw === 'string') return { bytes: raw, pointer: '/raw' };
  if (typeof file === 'object' && file !== null && typeof file.bytes === 'string') return { bytes: file.bytes, pointer: '/file/bytes' };
  return undefined;
}

/** The text `bytes` (base64) decode to, or undefined when they are not text. */
function decodedText(bytes: string): string | undefined {
  try {
    const text = decoder.decode(Buffer.from(bytes, 'base64'));
    return hasControl(text) ? undefined : text;
  } catch {
    return undefined;
  }
}

function readPart(part: unknown, pointer: string, reading: FilePartReading): void {
  const found = fileBytesOf(part);
  // Not base64: the runtime refuses it, and the general scan has read it as the text it is.
  if (!found || found.bytes.length === 0 || !BASE64.test(found.bytes)) return;
  const at = `${pointer}${found.pointer}`;
  const text = decodedText(found.bytes);
  if (text === undefined) {
    reading.unreadable.push(at);
    return;
  }
  for (const finding of scanForPhi(text)) reading.findings.push({ ...finding, pointer: `${at}${finding.pointer}` });
}

function visit(value: unknown, pointer: string, depth: number, reading: FilePartReading): void {
  if (depth > MAX_DEPTH || typeof value !== 'object' || value === null) return;
  if (Array.isArray(value)) {
    value.forEach((item, index) => visit(item, `${pointer}/${index}`, depth + 1, reading));
    return;
  }
  for (const [key, member] of Object.entries(value)) {
    const at = `${pointer}/${escapePointerToken(key)}`;
    if (key === 'parts' && Array.isArray(member)) member.forEach((part, index) => readPart(part, `${at}/${index}`, reading));
    visit(member, at, depth + 1, reading);
  }
}

/** Reads every message part's file bytes in a decoded JSON-RPC body (one request or a batch). */
export function readFileParts(body: unknown): FilePartReading {
  const reading: FilePartReading = { findings: [], unreadable: [] };
  visit(body, '', 0, reading);
  return reading;
}
