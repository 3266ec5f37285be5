// What a run of the A2A TCK (pytest) says: its counts, the tests it names as failed, and which of
// those are judged wrong (docs/conformance.md). Apart from scripts/tck.ts so that tests can read it.

export type Outcome = { passed: number; failed: number; finished: boolean };

/**
 * TCK tests judged wrong (docs/conformance.md, "A2A TCK: tests judged wrong", with the
 * specification's words): they still count as failed in every line printed, but a run whose only
 * failures are these exits 0, so CI stops on any other failure and not on the kit's own bugs.
 */
export const JUDGED_WRONG = ['test_push_notification_not_supported_error_32003_enhanced'] as const;

/** The names of the tests pytest's short summary lists as failed (`FAILED path::Class::test_name - …`). */
export function failedTests(output: string): string[] {
  return output
    .split('\n')
    .flatMap((line) => /^FAILED \S+::(\w+)/.exec(line)?.[1] ?? [])
    .filter((name, index, all) => all.indexOf(name) === index);
}

/** The counts of pytest's last summary line (`2 failed, 86 passed, 28 skipped in 16.5s`). */
export function pytestCounts(output: string): Outcome {
  const summary = output.split('\n').reverse().find((line) => /\b(passed|failed|error|errors|skipped)\b.* in [\d.]+s/.test(line));
  if (!summary) return { passed: 0, failed: 0, finished: false };
  const count = (word: string) => Number(new RegExp(`(\\d+) ${word}\\b`).exec(summary)?.[1] ?? 0);
  return { passed: count('passed'), failed: count('failed') + count('errors?'), finished: true };
}
