import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError } from '../../src/core/config.ts';
import { isLoopback } from '../../src/core/http/loopback.ts';
import { loadMcpConfig } from '../../src/mcp/mcp-config.ts';

const KEY = `rk_${'Ab3'.repeat(14)}`;
const base = { REGISTRY_URL: 'http://127.0.0.1:8080', REGISTRY_API_KEY: KEY };

function refusal(env: Record<string, string>): ConfigError {
  try {
    loadMcpConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error(`accepted ${JSON.stringify(env)}`);
}

describe('MCP configuration', () => {
  test('defaults: loopback, port 8090, 10 s registry timeout; the URL loses its trailing slash; the result is frozen', () => {
    const config = loadMcpConfig({ ...base, REGISTRY_URL: 'https://registry.example.org/ward/' });
    assert.deepEqual(
      { ...config },
      {
        REGISTRY_ENV: 'development',
        REGISTRY_URL: 'https://registry.example.org/ward',
        REGISTRY_API_KEY: KEY,
        MCP_HOST: '127.0.0.1',
        MCP_PORT: 8090,
        MCP_REGISTRY_TIMEOUT_MS: 10_000,
      },
    );
    assert.equal(Object.isFrozen(config), true);
    assert.equal(loadMcpConfig({ ...base, MCP_PORT: '0' }).MCP_PORT, 0);
    // No key is a configuration too: start-up then checks that the registry asks for none.
    assert.equal(loadMcpConfig({ REGISTRY_URL: base.REGISTRY_URL }).REGISTRY_API_KEY, undefined);
    assert.equal(loadMcpConfig({ REGISTRY_URL: base.REGISTRY_URL, REGISTRY_API_KEY: '  ' }).REGISTRY_API_KEY, undefined);
  });

  test('each unusable value is refused naming its variable', () => {
    const cases: Array<[Record<string, string>, string, RegExp]> = [
      [{ REGISTRY_API_KEY: KEY }, 'REGISTRY_URL', /is required/],
      [{ ...base, REGISTRY_URL: '' }, 'REGISTRY_URL', /is required/],
      [
        { ...base, REGISTRY_URL: 'localhost:8080' },
        'REGISTRY_URL',
        /http:\/\/ or https:\/\/ URL, not localhost:/,
      ],
      [{ ...base, REGISTRY_URL: 'no url at all' }, 'REGISTRY_URL', /is not a URL/],
      [{ ...base, REGISTRY_URL: 'http://h.example/?x=1' }, 'REGISTRY_URL', /without query or fragment/],
      [
        { ...base, REGISTRY_API_KEY: 'rk_short' },
        'REGISTRY_API_KEY',
        /rk_ followed by 32 to 128 letters and digits/,
      ],
      [{ ...base, REGISTRY_API_KEY: `Bearer ${KEY}` }, 'REGISTRY_API_KEY', /is not a registry API key/],
      [{ ...base, MCP_PORT: '65536' }, 'MCP_PORT', /invalid value/],
      [{ ...base, MCP_REGISTRY_TIMEOUT_MS: '10s' }, 'MCP_REGISTRY_TIMEOUT_MS', /invalid value/],
      [{ ...base, REGISTRY_ENV: 'staging' }, 'REGISTRY_ENV', /invalid value/],
    ];
    for (const [env, variable, message] of cases) {
      const error = refusal(env);
      assert.equal(error.variable, variable, JSON.stringify(env));
      assert.match(error.message, message);
      assert.doesNotMatch(error.message, /rk_short|AbAb/, 'the key is never repeated');
    }
  });

  test('production wants https for a remote registry, and allows plain http on loopback', () => {
    assert.equal(
      refusal({ ...base, REGISTRY_ENV: 'production', REGISTRY_URL: 'http://registry.example.org' }).variable,
      'REGISTRY_URL',
    );
    assert.equal(
      loadMcpConfig({ ...base, REGISTRY_ENV: 'production', REGISTRY_URL: 'https://registry.example.org' })
        .REGISTRY_URL,
      'https://registry.example.org',
    );
    assert.equal(
      loadMcpConfig({ ...base, REGISTRY_ENV: 'production', REGISTRY_URL: 'http://localhost:8080' })
        .REGISTRY_URL,
      'http://localhost:8080',
    );
  });

  test('loopback names and addresses', () => {
    for (const host of ['localhost', '127.0.0.1', '127.8.9.10', '::1', '[::1]'])
      assert.equal(isLoopback(host), true, host);
    for (const host of ['0.0.0.0', '10.0.0.1', 'registry.example.org', '::', '128.0.0.1'])
      assert.equal(isLoopback(host), false, host);
  });
});
