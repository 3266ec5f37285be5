/**
 * README "Using Ward from code" works as written: its code block is examples/discover-and-route.ts
 * word for word, and that file runs against a real registry, from the checkout and from another
 * project that installed Ward by path (a link in its node_modules, what `npm install /path/to/ward`
 * makes).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../mcp/helpers.ts';
import { registerOverHttp, startRegistries, testScope } from '../helpers/listening.ts';

const EXAMPLE = join(REPO_ROOT, 'examples', 'discover-and-route.ts');
const run = promisify(execFile);

describe('README: using Ward from code', () => {
  test('the README shows examples/discover-and-route.ts exactly', () => {
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    assert.ok(readme.includes(`\`\`\`ts\n${readFileSync(EXAMPLE, 'utf8')}\`\`\`\n`), 'the example in README.md differs from examples/discover-and-route.ts');
  });

  test('the example discovers, verifies and routes against a running registry, from the checkout and from a project linking it', async (t) => {
    const [registry] = await startRegistries(testScope(t), 'sqlite');
    const baseUrl = registry!.baseUrl;
    const agentId = await registerOverHttp(baseUrl, 'Chest pain triage');
    const expected = new RegExp(
      `^Chest pain triage \\(${agentId}\\), answer signed by key [\\w-]{43}\\nsend to https://agents\\.example\\.org/triage, then nothing else\\n$`,
    );
    const env = { ...process.env, REGISTRY_URL: baseUrl };

    const fromCheckout = await run(process.execPath, [EXAMPLE], { env, cwd: REPO_ROOT });
    assert.match(fromCheckout.stdout, expected);

    const project = mkdtempSync(join(tmpdir(), 'ward-user-'));
    t.after(() => rmSync(project, { recursive: true, force: true }));
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'ward-user', private: true, type: 'module', dependencies: { ward: `file:${REPO_ROOT}` } }));
    mkdirSync(join(project, 'node_modules'));
    symlinkSync(REPO_ROOT, join(project, 'node_modules', 'ward'), 'dir');
    copyFileSync(EXAMPLE, join(project, 'discover-and-route.ts'));
    const fromProject = await run(process.execPath, ['discover-and-route.ts'], { env, cwd: project });
    assert.match(fromProject.stdout, expected);
  });
});
