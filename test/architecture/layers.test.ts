/**
 * The folders are the architecture (issue 29, docs/architecture.md): the lint rules refuse every import
 * that points the wrong way, with no exception. Each case lints a fixture text as if it were a file of
 * that folder, with the project's own configuration, and expects the import refused (or allowed).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ESLint } from 'eslint';

const eslint = new ESLint({ cwd: new URL('../..', import.meta.url).pathname });

/** The messages of the layer rule (or of `rule`) for `from` imported in a file at `file`. */
async function refusals(file: string, from: string, rule = 'no-restricted-imports'): Promise<string[]> {
  const [result] = await eslint.lintText(`import { x } from '${from}';\nexport const y = x;\n`, { filePath: file });
  return (result?.messages ?? []).filter((message) => message.ruleId === rule).map((message) => message.message);
}

const REFUSED: Array<[string, string]> = [
  ['src/contract/fixture.ts', '../registry/agents/agent-service.ts'],
  ['src/contract/fixture.ts', '../client/registry-client.ts'],
  ['src/contract/schemas/fixture.ts', '../../console/console-app.ts'],
  ['src/client/fixture.ts', '../registry/discovery/discovery-service.ts'],
  ['src/client/trust/fixture.ts', '../../registry/agents/evidence/trust-validation.ts'],
  ['src/console/pages/fixture.ts', '../../registry/agents/agent-service.ts'],
  ['src/console/pages/fixture.ts', '../../mcp/tools/discover-agents.ts'],
  ['src/console/fixture.ts', '../mesh/gateway/gateway.ts'],
  ['src/mcp/fixture.ts', '../registry/http/error-handler.ts'],
  ['src/mcp/tools/fixture.ts', '../../console/console-app.ts'],
  ['src/mesh/runtime/fixture.ts', '../../registry/app.ts'],
  ['src/core/fixture.ts', '../contract/agent-record.ts'],
  ['src/core/fixture.ts', '../client/registry-client.ts'],
  ['src/registry/fixture.ts', '../console/console-app.ts'],
  ['src/computer-use/fixture.ts', '../registry/computer-use/computer-use-runs.ts'],
  ['src/computer-use/fixture.ts', '../console/console-app.ts'],
];

const ALLOWED: Array<[string, string]> = [
  ['src/contract/fixture.ts', '../core/errors.ts'],
  ['src/client/fixture.ts', '../contract/agent-record.ts'],
  ['src/console/pages/fixture.ts', '../../contract/event-types.ts'],
  ['src/console/pages/fixture.ts', '../../client/registry-client.ts'],
  ['src/mcp/fixture.ts', '../contract/mcp-vocabulary.ts'],
  ['src/registry/fixture.ts', '../client/trust/bundle-verifier.ts'],
  ['src/registry/fixture.ts', '../contract/schemas/common.ts'],
  ['src/registry/computer-use/fixture.ts', '../../computer-use/console-browser.ts'],
  ['src/computer-use/fixture.ts', '../contract/personas.ts'],
];

describe('layers', () => {
  for (const [file, from] of REFUSED) {
    test(`${file} may not import ${from}`, async () => {
      assert.ok((await refusals(file, from)).length > 0, 'the lint rules let it through');
    });
  }
  for (const [file, from] of ALLOWED) {
    test(`${file} may import ${from}`, async () => {
      assert.deepEqual(await refusals(file, from), []);
    });
  }
});

/** Inside the registry: features, their public files, their routes, the platform and the composition root (issue 42). */
const FEATURE_REFUSED: Array<[string, string, string]> = [
    ['src/registry/agents/fixture.ts', '../http/error-handler.ts', 'domain code imports no http/'],
  ['src/registry/discovery/routing/fixture.ts', '../../http/request-context.ts', 'domain code imports no http/, however deep'],
  ['src/registry/agents/fixture.ts', '../plugins/registry-services.ts', 'no feature imports the composition root'],
  ['src/registry/federation/fixture.ts', '../app.ts', 'no feature imports the composition root'],
  ['src/registry/discovery/fixture.ts', '../agents/agent-service.ts', "another feature's inner file"],
  ['src/registry/fhir/fixture.ts', '../agents/storage/agent-store.ts', "another feature's storage"],
  ['src/registry/discovery/fixture-routes.ts', '../agents/agent-routes.ts', "another feature's routes"],
  ['src/registry/ledger/fixture-routes.ts', '../agents/agent-records.ts', "a route file and another feature's inner file"],
  ['src/registry/http/fixture.ts', '../agents/index.ts', 'the platform imports no feature'],
  ['src/registry/storage/fixture.ts', '../discovery/index.ts', 'the platform imports no feature'],
  ['src/registry/storage/fixture.ts', '../http/error-handler.ts', 'storage knows no HTTP'],
];

const FEATURE_ALLOWED: Array<[string, string, string]> = [
  ['src/registry/discovery/fixture.ts', '../agents/index.ts', "another feature's public file"],
  ['src/registry/agents/cards/fixture.ts', '../agent-service.ts', 'its own feature, a folder up'],
  ['src/registry/agents/fixture.ts', '../storage/write-unit.ts', 'the storage platform'],
  ['src/registry/agents/fixture-routes.ts', '../http/route-plugin.ts', 'a route file speaks HTTP'],
  ['src/registry/plugins/fixture.ts', '../agents/agent-service.ts', 'the composition root assembles every feature'],
  ['src/registry/app.ts', './agents/agent-routes.ts', 'the composition root assembles every feature'],
];

describe('registry features', () => {
  for (const [file, from, why] of FEATURE_REFUSED) {
    test(`${file} may not import ${from} (${why})`, async () => {
      assert.ok((await refusals(file, from, 'boundaries/dependencies')).length > 0, 'the lint rules let it through');
    });
  }
  for (const [file, from, why] of FEATURE_ALLOWED) {
    test(`${file} may import ${from} (${why})`, async () => {
      assert.deepEqual(await refusals(file, from, 'boundaries/dependencies'), []);
    });
  }
});

describe('sizes', () => {
  const lint = async (text: string) => {
    const [result] = await eslint.lintText(text, { filePath: 'src/core/fixture.ts' });
    return (result?.messages ?? []).map((message) => message.ruleId);
  };
  const body = (lines: number) => Array.from({ length: lines }, (_, i) => `  x += ${i};`).join('\n');

  test('a function over 120 lines is refused, and one of 120 passes', async () => {
    assert.ok((await lint(`export function f(): number {\n  let x = 0;\n${body(117)}\n  return x;\n}\n`)).includes('max-lines-per-function'));
    assert.ok(!(await lint(`export function f(): number {\n  let x = 0;\n${body(116)}\n  return x;\n}\n`)).includes('max-lines-per-function'));
  });

  test('a file over 400 lines is refused', async () => {
    const functions = Array.from({ length: 41 }, (_, n) => `export function f${n}(): number {\n  let x = 0;\n${body(6)}\n  return x;\n}`).join('\n');
    assert.ok((await lint(`${functions}\n`)).includes('max-lines'));
  });
});
