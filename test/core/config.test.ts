import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, DEFAULT_MESH_JWT_SECRET, loadConfig, publicBaseUrl } from '../../src/core/config.ts';

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error;
  }
  assert.fail(`no error for ${JSON.stringify(env)}`);
}

describe('configuration', () => {
  test('defaults are the embedded development set-up on loopback', () => {
    const config = loadConfig({});
    assert.equal(config.REGISTRY_HOST, '127.0.0.1');
    assert.equal(config.REGISTRY_PORT, 8080);
    assert.equal(config.REGISTRY_AUTH_MODE, 'disabled');
    assert.equal(config.REGISTRY_TIER, 'root');
    assert.equal(config.REGISTRY_JURISDICTION, 'GB');
    assert.equal(config.REGISTRY_NAME, 'local');
    assert.equal(config.REGISTRY_SIGNING_ALG, 'ES256');
    assert.equal(config.REGISTRY_SIGN_RESPONSES, true);
    assert.equal(config.MESH_JWT_SECRET, DEFAULT_MESH_JWT_SECRET);
    assert.equal(config.DATABASE_URL, undefined);
    assert.match(config.REGISTRY_DATA_DIR, /\/data$/);
    assert.ok(Object.isFrozen(config));
  });

  test('values are parsed from their environment strings, jurisdictions in either case', () => {
    const config = loadConfig({ REGISTRY_PORT: '0', REGISTRY_SIGN_RESPONSES: 'false', REGISTRY_JURISDICTION: 'fr', DATABASE_URL: 'postgresql://u@h/db' });
    assert.equal(config.REGISTRY_PORT, 0);
    assert.equal(config.REGISTRY_SIGN_RESPONSES, false);
    assert.equal(config.REGISTRY_JURISDICTION, 'FR');
    assert.equal(config.DATABASE_URL, 'postgresql://u@h/db');
  });

  test('a bad value stops start-up with an error naming the variable', () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ REGISTRY_PORT: 'eighty' }, 'REGISTRY_PORT'],
      [{ REGISTRY_PORT: '70000' }, 'REGISTRY_PORT'],
      [{ REGISTRY_JURISDICTION: 'UK' }, 'REGISTRY_JURISDICTION'],
      [{ REGISTRY_TIER: 'global' }, 'REGISTRY_TIER'],
      [{ REGISTRY_SIGN_RESPONSES: 'yes' }, 'REGISTRY_SIGN_RESPONSES'],
      [{ DATABASE_URL: 'mysql://localhost/x' }, 'DATABASE_URL'],
      [{ DATABASE_SCHEMA: 'Bad-Schema' }, 'DATABASE_SCHEMA'],
      [{ REGISTRY_SIGNING_ALG: 'HS256' }, 'REGISTRY_SIGNING_ALG'],
      [{ REGISTRY_NAME: 'Has Spaces' }, 'REGISTRY_NAME'],
      [{ REGISTRY_PUBLIC_URL: 'ftp://x' }, 'REGISTRY_PUBLIC_URL'],
    ];
    for (const [env, variable] of cases) {
      const error = configError(env);
      assert.equal(error.variable, variable, JSON.stringify(env));
      assert.ok(error.message.startsWith(`${variable}:`));
    }
  });

  test('empty strings count as unset', () => {
    assert.equal(loadConfig({ REGISTRY_PORT: '', DATABASE_URL: '' }).REGISTRY_PORT, 8080);
  });

  test('a token mode without its settings is refused, naming the missing variable', () => {
    for (const mode of ['jwt', 'mtls', 'dpop']) assert.equal(configError({ REGISTRY_AUTH_MODE: mode }).variable, 'REGISTRY_JWT_JWKS_URI');
    const jwt = { REGISTRY_AUTH_MODE: 'jwt', REGISTRY_JWT_JWKS_URI: 'https://idp.example.org/jwks.json', REGISTRY_JWT_ISSUER: 'https://idp.example.org' };
    assert.equal(configError(jwt).variable, 'REGISTRY_JWT_AUDIENCE');
    assert.equal(loadConfig({ ...jwt, REGISTRY_JWT_AUDIENCE: 'ward' }).REGISTRY_AUTH_MODE, 'jwt');
    assert.equal(configError({ ...jwt, REGISTRY_JWT_AUDIENCE: 'ward', REGISTRY_AUTH_MODE: 'mtls' }).variable, 'REGISTRY_TLS_CERT_FILE');
    assert.equal(configError({ REGISTRY_TLS_CERT_FILE: '/x.pem' }).variable, 'REGISTRY_TLS_KEY_FILE');
  });

  test('production refuses disabled authentication, the default mesh secret and a short one', () => {
    assert.equal(configError({ REGISTRY_ENV: 'production' }).variable, 'REGISTRY_AUTH_MODE');
    const jwt = {
      REGISTRY_ENV: 'production',
      REGISTRY_AUTH_MODE: 'jwt',
      REGISTRY_JWT_JWKS_URI: 'https://idp.example.org/jwks.json',
      REGISTRY_JWT_ISSUER: 'https://idp.example.org',
      REGISTRY_JWT_AUDIENCE: 'ward',
    };
    assert.equal(configError(jwt).variable, 'MESH_JWT_SECRET', 'the default development secret');
    assert.equal(configError({ ...jwt, MESH_JWT_SECRET: 'short-secret' }).variable, 'MESH_JWT_SECRET');
    assert.equal(loadConfig({ ...jwt, MESH_JWT_SECRET: 'x'.repeat(32) }).REGISTRY_ENV, 'production');
    // The parent's answers decide this registry's chain: only over TLS in production.
    const secured = { ...jwt, MESH_JWT_SECRET: 'x'.repeat(32) };
    assert.equal(configError({ ...secured, REGISTRY_PARENT_URL: 'http://root.example.org' }).variable, 'REGISTRY_PARENT_URL');
    assert.equal(loadConfig({ ...secured, REGISTRY_PARENT_URL: 'https://root.example.org' }).REGISTRY_PARENT_URL, 'https://root.example.org');    // The keys deciding who is authenticated: https, or http to a key server on this host only.
    assert.equal(configError({ ...secured, REGISTRY_JWT_JWKS_URI: 'http://idp.example.org/jwks.json' }).variable, 'REGISTRY_JWT_JWKS_URI');
    assert.equal(loadConfig({ ...secured, REGISTRY_JWT_JWKS_URI: 'http://127.0.0.1:9000/jwks.json' }).REGISTRY_ENV, 'production');
    assert.equal(loadConfig({ ...jwt, REGISTRY_ENV: 'development', REGISTRY_JWT_JWKS_URI: 'http://idp.example.org/jwks.json' }).REGISTRY_ENV, 'development');
  });

  test('the public base URL is the configured one without a trailing slash, else the listen address', () => {
    assert.equal(publicBaseUrl(loadConfig({ REGISTRY_PUBLIC_URL: 'https://r.example.org/' })), 'https://r.example.org');
    assert.equal(publicBaseUrl(loadConfig({ REGISTRY_PORT: '0' }), 41234), 'http://127.0.0.1:41234');
  });
});
