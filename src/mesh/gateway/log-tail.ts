import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

const TAIL_BYTES = 16 * 1024;

/** The last `lines` lines of a log file (at most its last 16 KiB); none if it does not exist yet. */
export function readLogTail(path: string, lines: number): string[] {
  if (lines <= 0) return [];
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return [];
  }
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, TAIL_BYTES);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    const text = buffer.toString('utf8');
    const all = text.split('\n').filter((line) => line !== '');
    // A cut-off first line is dropped unless the whole file fitted.
    return (length < size ? all.slice(1) : all).slice(-lines);
  } finally {
    closeSync(fd);
  }
}

/**
 * What an agent's log says went wrong, for the answer to a caller when it could not start: the last
 * line of this start (after the gateway's `--- ward gateway: starting` marker) that reads as an error,
 * as its message (JSON log lines: `err.message`, else `msg`). Undefined when nothing says so.
 */
export function startFailureCause(path: string): string | undefined {
  const lines = readLogTail(path, 60);
  const since = lines.findLastIndex((line) => line.startsWith('--- ward gateway: starting'));
  for (const line of lines.slice(since + 1).reverse()) {
    const text = messageOf(line).trim();
    if (/\b(E[A-Z]{3,}|error|cannot|failed|refused|denied|invalid|in use)\b/i.test(text) && !/^\s*at\s/.test(text)) return text.slice(0, 300);
  }
  return undefined;
}

function messageOf(line: string): string {
  if (!line.startsWith('{')) return line;
  try {
    const entry = JSON.parse(line) as { msg?: unknown; err?: { message?: unknown } };
    return String(entry.err?.message ?? entry.msg ?? line);
  } catch {
    return line;
  }
}
