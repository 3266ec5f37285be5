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
