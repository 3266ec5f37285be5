/**
 * The folder graph (issue 42): which folders import which, read from the source's import statements.
 * Two levels: the top folders of src/, and the registry's features (src/registry/<feature>/, with app.ts
 * and server.ts counted with plugins/ as the composition root).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

const IMPORT = /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s+['"](\.{1,2}\/[^'"]+)['"]|import\s*\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

export type FolderGraph = Map<string, Set<string>>;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/** Builds the graph of `root`'s src/ with `folderOf` naming each file's folder (undefined: left out). */
export function folderGraph(root: string, folderOf: (path: string) => string | undefined): FolderGraph {
  const graph: FolderGraph = new Map();
  for (const file of sourceFiles(join(root, 'src'))) {
    const from = folderOf(relative(root, file));
    if (from === undefined) continue;
    const edges = graph.get(from) ?? new Set<string>();
    graph.set(from, edges);
    for (const match of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const target = folderOf(relative(root, normalize(join(dirname(file), (match[1] ?? match[2]) as string))));
      if (target !== undefined && target !== from) edges.add(target);
    }
  }
  return graph;
}

/** src/<top>/… → <top>. */
export const topFolder = (path: string): string | undefined => /^src\/([^/]+)\//.exec(path)?.[1];

/** src/registry/<feature>/… → <feature>; app.ts and server.ts → plugins (the composition root). */
export const registryFeature = (path: string): string | undefined => {
  if (!path.startsWith('src/registry/')) return undefined;
  return /^src\/registry\/([^/]+)\//.exec(path)?.[1] ?? 'plugins';
};

/** The graph's cycles: its strongly connected components of more than one folder (Tarjan). */
export function cycles(graph: FolderGraph): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) as number, low.get(next) as number));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node) as number, index.get(next) as number));
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return found;
}

/** One line per folder: `folder → what it imports`, sorted. */
export function describe(graph: FolderGraph): string {
  return [...graph.keys()].sort().map((node) => `${node} → ${[...(graph.get(node) ?? [])].sort().join(', ') || '(nothing)'}`).join('\n');
}
