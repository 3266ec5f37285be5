/**
 * How deep and how wide a parsed JSON value is, measured without recursion, so a hostile document
 * (a card nested 2 000 levels in 12 KB) is refused before any recursive walk can overflow the stack.
 */

export type JsonBounds = {
  /** Containers nested deeper than this are refused (the root is level 0). */
  readonly maxDepth: number;
  /** Values (members, items and the root) beyond this count are refused. */
  readonly maxMembers: number;
};

/** Why `value` is outside `bounds` (`depth` or `members`, with the pointer where it was noticed), or undefined. */
export function jsonShapeProblem(value: unknown, bounds: JsonBounds): { kind: 'depth' | 'members'; pointer: string } | undefined {
  const stack: Array<[unknown, number, string]> = [[value, 0, '']];
  let members = 0;
  while (stack.length > 0) {
    const [current, depth, pointer] = stack.pop() as [unknown, number, string];
    members += 1;
    if (members > bounds.maxMembers) return { kind: 'members', pointer };
    if (typeof current !== 'object' || current === null) continue;
    if (depth >= bounds.maxDepth) return { kind: 'depth', pointer };
    const entries = Object.entries(current);
    // Counted before being pushed: a million-item array is refused without a million-entry stack.
    if (members + stack.length + entries.length > bounds.maxMembers) return { kind: 'members', pointer };
    for (const [key, child] of entries) stack.push([child, depth + 1, `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`]);
  }
  return undefined;
}
