/**
 * The settings catalogue (src/core/settings-catalogue.ts) is the one source of each setting's meaning
 * and default: the console's settings page draws from it, and docs/configuration.md must say the same
 * words in the same groups. Every variable the registry's and the console's schemas read has an entry,
 * and every secret the registry would otherwise report is redacted.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ConfigSchema, loadConfig } from '../../src/core/config.ts';
import { ConsoleConfigSchema } from '../../src/console/console-config.ts';
import { SETTING_GROUPS, SETTINGS, settingSources, sourcesOf } from '../../src/core/settings-catalogue.ts';
import { configurationSources, effectiveConfiguration } from '../../src/registry/operations/diagnostics.ts';

const DOC = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');

test('every variable the registry and the console read has a group, a meaning and a default', () => {
  const names = new Set([...Object.keys(ConfigSchema.properties), ...Object.keys(ConsoleConfigSchema.properties)]);
  const described = new Set(SETTINGS.map((setting) => setting.name));
  assert.deepEqual([...names].filter((name) => !described.has(name)), [], 'variables without an entry');
  assert.deepEqual([...described].filter((name) => !names.has(name)), [], 'entries no schema reads');
  assert.equal(described.size, SETTINGS.length, 'each variable once');
  for (const setting of SETTINGS) {
    assert.ok(setting.meaning.length > 10, `${setting.name} has a meaning`);
    assert.ok(setting.default.length > 0, `${setting.name} has a default`);
    assert.ok(SETTING_GROUPS.some(([group]) => group === setting.group), `${setting.name} is in a known group`);
  }
});

test('docs/configuration.md lists each group\'s settings with the catalogue\'s own words, in its order', () => {
  for (const [group, title] of SETTING_GROUPS) {
    const start = DOC.indexOf(`\n### ${title}\n`);
    assert.ok(start > 0, `the docs have a "${title}" section`);
    const end = DOC.indexOf('\n#', start + 5);
    const rows = DOC.slice(start, end).split('\n').filter((line) => line.startsWith('| `'));
    const expected = SETTINGS.filter((setting) => setting.group === group).map((setting) => `| \`${setting.name}\` | ${setting.default} | ${setting.meaning} |`);
    assert.deepEqual(rows, expected, `the ${title} table`);
  }
});

test('diagnostics redact every secret of the catalogue, and say where each value came from', () => {
  const env = {
    REGISTRY_ENV: 'test',
    MESH_JWT_SECRET: 'a-mesh-secret-that-must-not-show-0123456789',
    COMPUTER_USE_API_KEY: 'sk-must-not-show',
    REGISTRY_KEY_ENCRYPTION_KEY: 'ab'.repeat(32),
    REGISTRY_KEY_ENCRYPTION_KEY_PREVIOUS: 'cd'.repeat(32),
    REGISTRY_API_KEY_SECRET: 'x'.repeat(40),
    REDIS_URL: 'redis://:password@127.0.0.1:6379',
  };
  const config = loadConfig(env);
  const values = effectiveConfiguration(config);
  for (const setting of SETTINGS.filter((entry) => entry.secret && entry.name in values && entry.readBy !== 'console')) {
    assert.notEqual(values[setting.name], (env as Record<string, string>)[setting.name], `${setting.name} is not shown`);
  }
  const shown = JSON.stringify(values);
  for (const secret of Object.values(env).filter((value) => value !== 'test')) assert.ok(!shown.includes(secret), `${secret} leaked`);
  const sources = configurationSources(config);
  assert.equal(sources.REGISTRY_ENV, 'environment');
  assert.equal(sources.REGISTRY_SIGNING_ALG, 'default');
  assert.equal(sources.REGISTRY_KEY_ENCRYPTION_KEY, 'environment');
  assert.deepEqual(Object.keys(sources), Object.keys(values));
  assert.equal(configurationSources({ ...config }).REGISTRY_ENV, 'unknown', 'a configuration built in code says so');
});

test('a value read from the file another variable names comes from "file"; an empty value is a default', () => {
  const sources = settingSources(['REGISTRY_KEY_ENCRYPTION_KEY', 'REGISTRY_PORT'], { REGISTRY_KEY_ENCRYPTION_KEY_FILE: '/run/secrets/kek', REGISTRY_PORT: '' });
  assert.deepEqual(sources, { REGISTRY_KEY_ENCRYPTION_KEY: 'file', REGISTRY_PORT: 'default' });
  assert.equal(sourcesOf(loadConfig({ REGISTRY_PORT: '9000' }))?.REGISTRY_PORT, 'environment');
});
