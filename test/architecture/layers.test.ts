/**
 * The folders are the architecture (issue 29, docs/architecture.md): the lint rules refuse every import
 * that points the wrong way, with no exception. Each case lints a fixture text as if it were a file of
 * that folder, with the project's own configuration, and expects the import refused (or allowed).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ESLint } from 'eslint';

const eslint = new ESLint({ cwd: new URL('../..', import.meta.url).pathname });

/** The messages of the layer rule for `from` imported in a file at `file`. */
async function refusals(file: string, from: string): Promise<string[]> {
  const [result] = await eslint.lintText(`import { x } from '${from}';\nexport const y = x;\n`, { filePath: file });
  return (result?.messages ?? []).filter((message) => message.ruleId === 'no-restricted-imports').map((message) => message.message);
}

const REFUSED: Array<[string, string]> = [
  ['src/contract/fixture.ts', '../registry/agents/agent-service.ts'],
  ['src/contract/fixture.ts', '../client/registry-client.ts'],
  ['src/contract/schemas/fixture.ts', '../../console/console-app.ts'],
  ['src/client/fixture.ts', '../registry/discovery/discovery-service.ts'],
  ['src/client/trust/fixture.ts', '../../registry/trust/trust-validation.ts'],
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
