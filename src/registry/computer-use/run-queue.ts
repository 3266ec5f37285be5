/**
 * The runs this instance holds: at most `maxRuns` run at once, the rest wait in the order they were
 * asked for. A cancel takes a run out of the queue or aborts it; closing aborts them all and waits
 * for each to stop.
 */
import type { RunRequester } from './run-credential.ts';
import type { LocalRun } from './run-execution.ts';

export class RunQueue {
  readonly #waiting: LocalRun[] = [];
  readonly #running = new Map<string, LocalRun>();
  readonly #finished = new Set<Promise<void>>();
  readonly #execute: (local: LocalRun) => Promise<void>;
  readonly #maxRuns: number;
  readonly #log: (error: unknown, message: string) => void;
  #closed = false;

  constructor(execute: (local: LocalRun) => Promise<void>, maxRuns: number, log: (error: unknown, message: string) => void) {
    this.#execute = execute;
    this.#maxRuns = maxRuns;
    this.#log = log;
  }

  /** Queues a committed run; it starts once fewer than `maxRuns` run here. */
  add(sessionId: string, requester: RunRequester): void {
    if (this.#closed) return;
    this.#waiting.push({ sessionId, requester, controller: new AbortController() });
    this.#pump();
  }

  /** Takes a run out of the queue, or aborts it where it runs (it stops within its turn). */
  stop(sessionId: string): void {
    const queued = this.#waiting.findIndex((local) => local.sessionId === sessionId);
    if (queued >= 0) this.#waiting.splice(queued, 1);
    this.#running.get(sessionId)?.controller.abort();
  }

  /** Aborts every run, waits for each to stop, and returns them (their ends are the caller's to write). */
  async close(): Promise<LocalRun[]> {
    this.#closed = true;
    const stopped = [...this.#waiting.splice(0), ...this.#running.values()];
    for (const local of stopped) local.controller.abort();
    await Promise.allSettled([...this.#finished]);
    return stopped;
  }

  #pump(): void {
    while (!this.#closed && this.#running.size < this.#maxRuns && this.#waiting.length > 0) {
      const local = this.#waiting.shift() as LocalRun;
      this.#running.set(local.sessionId, local);
      const done = this.#execute(local)
        .catch((error: unknown) => this.#log(error, 'computer-use run failed unexpectedly'))
        .finally(() => {
          this.#running.delete(local.sessionId);
          this.#finished.delete(done);
          this.#pump();
        });
      this.#finished.add(done);
    }
  }
}
