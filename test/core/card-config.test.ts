import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { cardSignaturePolicy, loadConfig, type ConfigError } from '../../src/core/config.ts';

const PRODUCTION = {
  REGISTRY_ENV: 'production',
  REGISTRY_AUTH_MODE: 'jwt',
  REGISTRY_JWT_JWKS_URI: 'https://idp.example.org/jwks.json',
  REGISTRY_JWT_ISSUER: 'https://idp.example.org',
  REGISTRY_JWT_AUDIENCE: 'ward',
  MESH_JWT_SECRET: 'a-production-secret-of-at-least-32-bytes!',
};

describe('card settings', () => {
  test('REGISTRY_CARD_SIGNATURES is if-present by default, required by default in production, and as set otherwise', () => {
    assert.equal(cardSignaturePolicy(loadConfig({})), 'if-present');
    assert.equal(cardSignaturePolicy(loadConfig({ REGISTRY_ENV: 'test' })), 'if-present');
    assert.equal(cardSignaturePolicy(loadConfig(PRODUCTION)), 'required');
    assert.equal(cardSignaturePolicy(loadConfig({ ...PRODUCTION, REGISTRY_CARD_SIGNATURES: 'if-present' })), 'if-present');
    assert.equal(cardSignaturePolicy(loadConfig({ REGISTRY_CARD_SIGNATURES: 'off' })), 'off');
    assert.throws(() => loadConfig({ REGISTRY_CARD_SIGNATURES: 'sometimes' }), (error: ConfigError) => error.variable === 'REGISTRY_CARD_SIGNATURES');
  });

  test('limits and the re-read interval: defaults, bounds, 0 for off', () => {
    const config = loadConfig({});
    assert.deepEqual([config.REGISTRY_CARD_TIMEOUT_MS, config.REGISTRY_CARD_MAX_BYTES, config.REGISTRY_CARD_REREAD_INTERVAL_MS], [5000, 65_536, 3_600_000]);
    assert.equal(loadConfig({ REGISTRY_CARD_REREAD_INTERVAL_MS: '0' }).REGISTRY_CARD_REREAD_INTERVAL_MS, 0);
    for (const [variable, value] of [['REGISTRY_CARD_REREAD_INTERVAL_MS', '500'], ['REGISTRY_CARD_MAX_BYTES', '10'], ['REGISTRY_CARD_TIMEOUT_MS', '99']]) {
      assert.throws(() => loadConfig({ [variable as string]: value as string }), (error: ConfigError) => error.variable === variable, variable);
    }
  });
});
