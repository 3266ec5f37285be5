import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { buildTestRegistry } from '../helpers/registry.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const ROW = /^\| `([A-Za-z0-9]+)` \| (GET|POST|PUT|PATCH|DELETE) (\S+) \| ([a-z-]+) \| ([a-z:]+) \|/;

describe('docs/api.md "Operations"', () => {
  test('lists every operation of the served OpenAPI document by operationId, with its method, path, tag and scope, and nothing else', async (t) => {
    const registry = await buildTestRegistry(t, 'sqlite');
    const document = (await registry.call({ method: 'GET', url: '/v1/openapi.json' })).body;
    const served: string[] = [];
    for (const [path, operations] of Object.entries<Record<string, any>>(document.paths)) {
      for (const [method, operation] of Object.entries<any>(operations)) {
        served.push(`${operation.operationId} ${method.toUpperCase()} ${path} ${operation.tags[0]} ${operation['x-required-scope']}`);
      }
    }
    const page = readFileSync(`${ROOT}docs/api.md`, 'utf8');
    const section = page.slice(page.indexOf('\n## Operations\n'));
    const listed = section.split('\n').flatMap((line) => {
      const match = ROW.exec(line);
      return match ? [`${match[1]} ${match[2]} ${match[3]} ${match[4]} ${match[5]}`] : [];
    });
    assert.deepEqual(
      { missing: served.filter((row) => !listed.includes(row)), unknown: listed.filter((row) => !served.includes(row)) },
      { missing: [], unknown: [] },
    );
  });
});
