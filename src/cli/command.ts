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

/**
 * Arguments a command cannot run with. `ward` answers it with `ward <command>: <message>` and the
 * command's usage on stderr (the usage alone when there is no message), and exit status 2.
 */
export class UsageError extends Error {}

/**
 * The arguments after a command's one action (`ward trust verify …` → the ones after `verify`).
 * Without an action the usage is the answer; another action is refused by name.
 */
export function argumentsAfter(action: string, args: readonly string[]): string[] {
  const [given, ...rest] = args;
  if (given !== action) throw new UsageError(given === undefined ? '' : `unknown action "${given}"`);
  return rest;
}
