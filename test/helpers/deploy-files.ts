/** The deployment files under deploy/, read as the deploy tests check them. */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { REPO_ROOT } from './ward-process.ts';

export const DEPLOY = join(REPO_ROOT, 'deploy');

export const PACKAGE = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
  version: string;
  license: string;
  dependencies: Record<string, string>;
};

export type Manifest = { kind: string; metadata: { name: string; labels?: Record<string, string> }; [key: string]: any };

/** Every document of deploy/kubernetes/*.yaml. */
export function manifests(): Manifest[] {
  const dir = join(DEPLOY, 'kubernetes');
  return readdirSync(dir)
    .filter((file) => file.endsWith('.yaml'))
    .flatMap((file) =>
      parseAllDocuments(readFileSync(join(dir, file), 'utf8')).map((document) => {
        assert.deepEqual(document.errors, [], file);
        return document.toJS() as Manifest;
      }),
    );
}

export const named = (all: Manifest[], kind: string, name: string): Manifest => {
  const found = all.find((manifest) => manifest.kind === kind && manifest.metadata.name === name);
  assert.ok(found, `${kind} ${name}`);
  return found;
};

/** The pod templates of the Deployments and Jobs, by name. */
export function podsOf(all: Manifest[]): Array<{ name: string; kind: string; pod: any }> {
  return all.filter((manifest) => ['Deployment', 'Job'].includes(manifest.kind)).map((manifest) => ({ name: manifest.metadata.name, kind: manifest.kind, pod: manifest.spec.template.spec }));
}
