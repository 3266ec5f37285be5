import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, test } from 'node:test';
import { ManifestError, dependentsOf, findCycle, loadManifest, parseManifest, startOrder } from '../../../src/mesh/gateway/manifest.ts';

const agent = (dependencies: string[] = [], port = 0) => ({ entry: './x.ts', port, dependencies });

function refusal(value: unknown): string {
  try {
    parseManifest(value, '/base');
  } catch (error) {
    assert.ok(error instanceof ManifestError, String(error));
    return error.message;
  }
  assert.fail('accepted');
}

describe('agent manifest', () => {
  test('the shipped manifest loads: consent, then triage and the clinician avatar depending on consent, entries that exist', () => {
    const manifest = loadManifest();
    assert.deepEqual([...manifest.agents.keys()], ['clinician_avatar', 'consent', 'triage']);
    assert.deepEqual(manifest.agents.get('triage')?.dependencies, ['consent']);
    assert.deepEqual(manifest.agents.get('clinician_avatar')?.dependencies, ['consent']);
    for (const entry of manifest.agents.values()) assert.ok(existsSync(entry.entry), entry.entry);
  });

  test('entry paths resolve against the manifest\'s directory', () => {
    assert.equal(parseManifest({ agents: { a: agent() } }, '/srv/mesh').agents.get('a')?.entry, '/srv/mesh/x.ts');
  });

  test('a dependency cycle is refused at load, naming the cycle', () => {
    assert.match(refusal({ agents: { a: agent(['b']), b: agent(['c']), c: agent(['a']) } }), /dependency cycle a → b → c → a/);
    assert.match(refusal({ agents: { a: agent(['a']) } }), /dependency cycle a → a/);
  });

  test('an unknown dependency, a duplicate port, a bad alias and unknown fields are refused', () => {
    assert.match(refusal({ agents: { a: agent(['ghost']) } }), /unknown agent "ghost"/);
    assert.match(refusal({ agents: { a: agent([], 9000), b: agent([], 9000) } }), /both use port 9000/);
    assert.match(refusal({ agents: { 'Bad Alias': agent() } }), /alias/);
    assert.match(refusal({ agents: { a: { ...agent(), extra: true } } }), /manifest/);
    assert.match(refusal({}), /manifest/);
  });

  test('start order puts dependencies first, each once', () => {
    const manifest = parseManifest({ agents: { a: agent(['b', 'c']), b: agent(['d']), c: agent(['d']), d: agent() } }, '/');
    assert.deepEqual(startOrder(manifest, 'a'), ['d', 'b', 'c', 'a']);
    assert.deepEqual(startOrder(manifest, 'd'), ['d']);
  });

  test('dependents are found transitively', () => {
    const manifest = parseManifest({ agents: { a: agent(['b']), b: agent(['c']), c: agent(), x: agent() } }, '/');
    assert.deepEqual([...dependentsOf(manifest, 'c')].sort(), ['a', 'b']);
    assert.deepEqual([...dependentsOf(manifest, 'x')], []);
  });

  test('findCycle finds none in a DAG', () => {
    assert.equal(findCycle(new Map([['a', ['b']], ['b', []]])), undefined);
  });
});
