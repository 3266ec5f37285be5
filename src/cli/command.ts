/**
 * One `ward` sub-command. `run` returns the exit code, or `'running'` for a command that keeps serving
 * until a signal stops it.
 */
export type WardCommand = {
  readonly name: string;
  readonly summary: string;
  run(args: string[]): Promise<number | 'running'>;
};
