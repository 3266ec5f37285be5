/**
 * Polls `check` until it returns a value. `timeoutMs` is a safety net that turns a hang into a failure
 * naming what was awaited (`what`, or what it says at that moment: the last state seen), not an
 * assertion on timing. How tests wait: docs/testing.md.
 */
export async function eventually<T>(
  check: () => Promise<T | undefined> | T | undefined,
  what: string | (() => string),
  timeoutMs = 20_000,
  everyMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${typeof what === 'function' ? what() : what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/**
 * `promise`, unless it has not settled after `timeoutMs`: then a failure saying the work is stuck on
 * `what`. A safety net far above any real duration (the default 20 s), for a test whose point is that
 * something is NOT waited for: make that thing take far longer (a process that never answers, a timeout
 * of minutes), and the net fails the test only if it is waited for, never because the machine is busy.
 */
export async function settles<T>(promise: Promise<T>, what: string, timeoutMs = 20_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`stuck: ${what}`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, stuck]);
  } finally {
    clearTimeout(timer);
  }
}
