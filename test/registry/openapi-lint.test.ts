/**
 * Issue 34's acceptance on the document a registry serves: Spectral's standard OpenAPI ruleset
 * (`spectral:oas`, .spectral.yaml) finds nothing, neither error nor warning; the document is valid
 * OpenAPI 3.0.3 (test/registry/openapi.test.ts) and at most half the size it had before its shared
 * types were named.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { buildTestRegistry } from '../helpers/registry.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const SPECTRAL = join(ROOT, 'node_modules/.bin/spectral');
/** The document's size before issue 34 (every schema written out where used), measured on this configuration. */
const BYTES_BEFORE = 765_599;

type Finding = { code: string; severity: number; path: string[]; message: string };

describe('the served OpenAPI document under a linter', () => {
  test('spectral:oas reports 0 errors and 0 warnings (nor anything else)', async (t) => {
    const registry = await buildTestRegistry(t, 'sqlite');
    const address = await registry.app.listen({ host: '127.0.0.1', port: 0 });
    const dir = mkdtempSync(join(tmpdir(), 'ward-spectral-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const output = join(dir, 'findings.json');
    // --fail-severity hint: any finding at all makes spectral exit 1, which the findings then explain.
    await promisify(execFile)(SPECTRAL, ['lint', `${address}/v1/openapi.json`, '--ruleset', join(ROOT, '.spectral.yaml'), '--format', 'json', '--output', output, '--fail-severity', 'hint', '--quiet'], { cwd: ROOT }).catch(() => undefined);
    const findings = JSON.parse(readFileSync(output, 'utf8')) as Finding[];
    const listed = findings.map((finding) => `${finding.code} (severity ${finding.severity}) at ${finding.path.join('/')}: ${finding.message}`);
    assert.deepEqual(listed, []);
  });

  test('the document is at most half its size before its shared types were named', async (t) => {
    const registry = await buildTestRegistry(t, 'sqlite');
    const response = await registry.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    const bytes = Buffer.byteLength(response.body);
    t.diagnostic(`${bytes} bytes (${((100 * bytes) / BYTES_BEFORE).toFixed(1)}% of ${BYTES_BEFORE})`);
    assert.ok(bytes <= BYTES_BEFORE / 2, `${bytes} bytes`);
  });
});
