import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, DEFAULT_MESH_JWT_SECRET } from '../../src/core/config.ts';
import { agentDid, loadMeshConfig } from '../../src/mesh/mesh-config.ts';

function refused(env: Record<string, string>): ConfigError {
  try {
    loadMeshConfig(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error;
  }
  assert.fail('accepted');
}

const STRONG = 'x'.repeat(32);

describe('mesh configuration', () => {
  test('defaults: loopback, gateway on 8100, the development secret, a one-hour token limit, DID verification off', () => {
    const config = loadMeshConfig({});
    assert.equal(config.MESH_HOST, '127.0.0.1');
    assert.equal(config.GATEWAY_PORT, 8100);
    assert.equal(config.MESH_JWT_SECRET, DEFAULT_MESH_JWT_SECRET);
    assert.equal(config.MESH_JWT_MAX_TTL, 3600);
    assert.equal(config.DID_VERIFY, false);
    assert.equal(config.AGENT_PORT, undefined);
    assert.match(config.MESH_DATA_DIR, /\/data\/mesh$/);
    assert.ok(Object.isFrozen(config));
  });

  test('values are parsed from their strings', () => {
    const config = loadMeshConfig({ AGENT_PORT: '0', DID_VERIFY: 'true', MESH_JWT_MAX_TTL: '600', REGISTRY_DATA_DIR: '/tmp/w' });
    assert.equal(config.AGENT_PORT, 0);
    assert.equal(config.DID_VERIFY, true);
    assert.equal(config.MESH_JWT_MAX_TTL, 600);
    assert.equal(config.MESH_DATA_DIR, '/tmp/w/mesh', 'the mesh lives under the registry data directory by default');
  });

  for (const [variable, value] of [
    ['AGENT_PORT', 'abc'],
    ['GATEWAY_PORT', '70000'],
    ['MESH_JWT_MAX_TTL', '0'],
    ['DID_VERIFY', 'yes'],
    ['GATEWAY_START_TIMEOUT_MS', '-5'],
    ['MESH_GATEWAY_URL', 'ftp://x'],
  ] as const) {
    test(`a bad ${variable} stops start-up naming it`, () => {
      assert.equal(refused({ [variable]: value }).variable, variable);
    });
  }

  test('production refuses the default secret, a secret under 32 bytes, and a local did:web directory', () => {
    assert.equal(refused({ REGISTRY_ENV: 'production' }).variable, 'MESH_JWT_SECRET');
    assert.equal(refused({ REGISTRY_ENV: 'production', MESH_JWT_SECRET: 'x'.repeat(31) }).variable, 'MESH_JWT_SECRET');
    assert.equal(refused({ REGISTRY_ENV: 'production', MESH_JWT_SECRET: STRONG, DID_WEB_DIR: '/tmp' }).variable, 'DID_WEB_DIR');
    assert.equal(loadMeshConfig({ REGISTRY_ENV: 'production', MESH_JWT_SECRET: STRONG }).MESH_JWT_SECRET, STRONG);
  });

  test('agent DIDs follow the spec\'s did:web:<domain>:agents:<name>', () => {
    assert.equal(agentDid(loadMeshConfig({}), 'triage'), 'did:web:localhost:agents:triage');
  });
});
