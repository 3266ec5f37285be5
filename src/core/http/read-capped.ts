/**
 * Reading a response body from another party without trusting its size: `response.text()` holds the
 * whole body in memory before any check can run, and `string.length` counts UTF-16 units, not bytes.
 */

/** Thrown by {@link readBodyCapped} when a body is larger than allowed. */
export class BodyTooLargeError extends Error {
  readonly maxBytes: number;

  constructor(maxBytes: number) {
    super(`The response body is larger than ${maxBytes} bytes.`);
    this.name = 'BodyTooLargeError';
    this.maxBytes = maxBytes;
  }
}

/**
 * The body of `response` decoded as UTF-8 (a byte order mark is dropped and malformed sequences become
 * U+FFFD, as `response.text()` does), reading at most `maxBytes` bytes. Past the cap, the body is
 * cancelled, which releases the connection, and a {@link BodyTooLargeError} is thrown; a declared
 * `content-length` over the cap fails before any byte is read. Errors of the stream itself (an abort
 * signal firing, a reset connection) propagate unchanged. A response without a body reads as ''.
 */
export async function readBodyCapped(response: Response, maxBytes: number): Promise<string> {
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) throw new RangeError(`maxBytes must be a non-negative integer, got ${maxBytes}`);
  const body = response.body;
  if (!body) return '';
  const reader = body.getReader();
  const tooLarge = async () => {
    const error = new BodyTooLargeError(maxBytes);
    // A failing cancel must not hide why reading stopped.
    await reader.cancel(error).catch(() => undefined);
    return error;
  };
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (declared > maxBytes) throw await tooLarge();
  const decoder = new TextDecoder('utf-8');
  const parts: string[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) throw await tooLarge();
    parts.push(decoder.decode(value, { stream: true }));
  }
  parts.push(decoder.decode());
  return parts.join('');
}
