/**
 * One `ward` sub-command. `run` returns the exit code, or `'running'` for a command that keeps serving
 * until a signal stops it.
 */
export type WardCommand = {
  readonly name: string;
  /** What `ward <name> --help` and `ward help <name>` print: usage, options, an example. */
  readonly usage: string;
  /** Whether the command takes arguments at all; one that does not refuses any (exit 2). Default true. */
  readonly takesArguments?: boolean;
  run(args: string[]): Promise<number | 'running'>;
};
