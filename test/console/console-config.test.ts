import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadConsoleConfig } from '../../src/console/console-config.ts';
import { ConfigError } from '../../src/core/config.ts';

describe('console configuration', () => {
  test('development on loopback with authentication disabled opens without sign-in', () => {
    const config = loadConsoleConfig({ REGISTRY_AUTH_MODE: 'disabled' });
    assert.equal(config.openAccess, true);
    assert.equal(config.REGISTRY_URL, 'http://127.0.0.1:8080');
    assert.equal(config.GATEWAY_URL, 'http://127.0.0.1:8100');
    assert.deepEqual(config.allowedOrigins, ['http://127.0.0.1:3000']);
    assert.equal(config.secureCookies, false);
  });

  test('any other case asks for sign-in: authentication on, or a bind beyond loopback', () => {
    assert.equal(loadConsoleConfig({ REGISTRY_AUTH_MODE: 'jwt' }).openAccess, false);
    assert.equal(loadConsoleConfig({ REGISTRY_AUTH_MODE: 'disabled', CONSOLE_HOST: '0.0.0.0' }).openAccess, false);
  });

  test('production refuses to start without TLS or https origins of a proxy', () => {
    const production = { REGISTRY_ENV: 'production', REGISTRY_AUTH_MODE: 'jwt' };
    assert.throws(() => loadConsoleConfig(production), (error: unknown) => error instanceof ConfigError && /CONSOLE_TLS_CERT_FILE/.test(error.message));
    assert.throws(
      () => loadConsoleConfig({ ...production, CONSOLE_ALLOWED_ORIGINS: 'http://console.example.org' }),
      (error: unknown) => error instanceof ConfigError && /CONSOLE_ALLOWED_ORIGINS/.test(error.message),
    );
    assert.throws(() => loadConsoleConfig({ ...production, CONSOLE_TLS_CERT_FILE: '/tmp/cert.pem' }), /CONSOLE_TLS_KEY_FILE/);
    assert.throws(
      () => loadConsoleConfig({ ...production, CONSOLE_ALLOWED_ORIGINS: 'https://console.example.org' }),
      (error: unknown) => error instanceof ConfigError && /CONSOLE_TRUST_PROXY/.test(error.message),
    );
    const proxied = loadConsoleConfig({ ...production, CONSOLE_ALLOWED_ORIGINS: 'https://console.example.org, https://ops.example.org', CONSOLE_TRUST_PROXY: '10.0.0.5' });
    assert.deepEqual(proxied.trustedProxies, ['10.0.0.5']);
    assert.deepEqual(proxied.allowedOrigins.slice(1), ['https://console.example.org', 'https://ops.example.org']);
    assert.equal(proxied.secureCookies, true);
    assert.equal(proxied.openAccess, false);
  });

  test('a bad value names its variable', () => {
    assert.throws(() => loadConsoleConfig({ CONSOLE_PORT: 'abc' }), /CONSOLE_PORT/);
    assert.throws(() => loadConsoleConfig({ REGISTRY_URL: 'ftp://x' }), /REGISTRY_URL/);
    assert.throws(() => loadConsoleConfig({ CONSOLE_SESSION_IDLE_MINUTES: '0' }), /CONSOLE_SESSION_IDLE_MINUTES/);
  });
});
