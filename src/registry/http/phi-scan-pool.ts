/**
 * The PHI guard's cost per request, bounded, and off the event loop for large bodies (issue 41,
 * finding 4; docs/performance.md, "The PHI guard under a flood"):
 *
 * - a body holding more text (string values and member names, counted without recursion) than
 *   REGISTRY_PHI_MAX_TEXT_CHARS is refused with 413 before anything scans it;
 * - a body holding more than {@link INLINE_TEXT_CHARS} of text is scanned in a worker thread (one, made
 *   when first needed), so the event loop keeps answering other callers (`/health`, small requests)
 *   while it runs; smaller bodies, nearly all of them, are scanned inline as before (a worker round trip
 *   costs more than their scan).
 *
 * The scan is the same function either way (core/phi/scan.ts); a worker that fails is replaced, and
 * its job scanned inline, so a body is never let through unscanned.
 */
import { Worker } from 'node:worker_threads';
import { scanForPhi, type PhiFinding } from '../../core/phi/index.ts';

/** Below this much text a body is scanned inline: microseconds, less than a worker round trip. */
export const INLINE_TEXT_CHARS = 16_384;

/** The text a body holds: its strings' and member names' lengths, counted iteratively; stops counting past `stopAt`. */
export function textCharsIn(value: unknown, stopAt = Number.POSITIVE_INFINITY): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && total <= stopAt) {
    const current = stack.pop();
    if (typeof current === 'string') total += current.length;
    else if (Array.isArray(current)) {
      for (const item of current) stack.push(item);
    } else if (typeof current === 'object' && current !== null) {
      for (const [key, child] of Object.entries(current)) {
        total += key.length;
        stack.push(child);
      }
    }
  }
  return total;
}

type Job = { id: number; value: unknown; resolve: (findings: PhiFinding[]) => void };

export function createPhiScanPool() {
  let worker: Worker | undefined;
  let nextId = 0;
  const pending = new Map<number, Job>();
  let closed = false;

  const start = (): Worker => {
    const started = new Worker(new URL('./phi-scan-worker.ts', import.meta.url));
    started.unref();
    started.on('message', (answer: { id: number; findings?: PhiFinding[]; error?: string }) => {
      const job = pending.get(answer.id);
      if (!job) return;
      pending.delete(answer.id);
      job.resolve(answer.findings ?? scanForPhi(job.value));
    });
    const fail = () => {
      if (worker === started) worker = undefined;
      // Whatever the worker held is scanned here: never let through unscanned.
      for (const job of pending.values()) job.resolve(scanForPhi(job.value));
      pending.clear();
    };
    started.on('error', fail);
    started.on('exit', fail);
    return started;
  };

  return {
    /** The findings for `value`: inline when small (or when the pool is closed), in the worker otherwise. */
    async scan(value: unknown, textChars: number): Promise<PhiFinding[]> {
      if (textChars <= INLINE_TEXT_CHARS || closed) return scanForPhi(value);
      worker ??= start();
      const target = worker;
      return new Promise<PhiFinding[]>((resolve) => {
        const id = (nextId += 1);
        pending.set(id, { id, value, resolve });
        target.postMessage({ id, value });
      });
    },
    async close(): Promise<void> {
      closed = true;
      const stopping = worker;
      worker = undefined;
      await stopping?.terminate();
    },
  };
}

export type PhiScanPool = ReturnType<typeof createPhiScanPool>;
