/**
 * No folder-level cycles (issue 42): the top folders of src/ and the registry's features form a graph
 * without a circle. The test prints both graphs, so anyone can read the architecture off a test run
 * (`npx node --test test/architecture/folder-graph.test.ts`).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cycles, describe, folderGraph, registryFeature, topFolder } from './folder-graph.ts';

const root = new URL('../..', import.meta.url).pathname;

for (const [name, folderOf] of [['the top folders of src/', topFolder], ["the registry's features", registryFeature]] as const) {
  test(`${name} import each other without a cycle`, (t) => {
    const graph = folderGraph(root, folderOf);
    t.diagnostic(`${name}:\n${describe(graph)}`);
    assert.deepEqual(cycles(graph), [], `cycles:\n${describe(graph)}`);
  });
}

test('a cycle is found when there is one (the checker can fail)', () => {
  const graph = new Map([['a', new Set(['b'])], ['b', new Set(['c'])], ['c', new Set(['a'])], ['d', new Set(['a'])]]);
  assert.deepEqual(cycles(graph), [['a', 'b', 'c']]);
});
