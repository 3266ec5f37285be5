// Real keys, a real JWKS server and real access tokens for the auth-mode tests. Keys come from
// node:crypto, tokens from jose, the JWKS is served over HTTP on an ephemeral loopback port.
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { randomUUID, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';
import { SignJWT, type JWTPayload } from 'jose';
import { AuthFailure, type AuthFailureReason } from '../../../src/registry/credentials/auth-failure.ts';
import { createJwtVerifier, type JwtVerifierOptions } from '../../../src/registry/credentials/jwt-bearer.ts';

export const ISSUER = 'https://issuer.ward.test';
export const AUDIENCE = 'https://registry.ward.test';

/** The instant token times are judged at in the JWT tests. */
export const NOW = new Date('2026-03-01T12:00:00.000Z');
export const NOW_SECONDS = Math.floor(NOW.getTime() / 1000);

export type TokenAlg = 'RS256' | 'ES256' | 'EdDSA';

/** A signing key of the issuer, with its published JWK. */
export type SigningKey = {
  alg: TokenAlg;
  kid: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  jwk: Record<string, unknown>;
};

export function makeSigningKey(alg: TokenAlg, kid: string = randomUUID()): SigningKey {
  const { privateKey, publicKey } =
    alg === 'RS256'
      ? generateKeyPairSync('rsa', { modulusLength: 2048 })
      : alg === 'ES256'
        ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
        : generateKeyPairSync('ed25519');
  return {
    alg,
    kid,
    privateKey,
    publicKey,
    jwk: { ...publicKey.export({ format: 'jwk' }), kid, alg, use: 'sig' },
  };
}

/** A production registry's environment in jwt mode against the JWKS at `jwksUri` (a secret long enough, no probes). */
export function productionJwtEnv(jwksUri: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    REGISTRY_ENV: 'production',
    REGISTRY_AUTH_MODE: 'jwt',
    REGISTRY_JWT_JWKS_URI: jwksUri,
    REGISTRY_JWT_ISSUER: ISSUER,
    REGISTRY_JWT_AUDIENCE: AUDIENCE,
    MESH_JWT_SECRET: 'a-production-secret-of-at-least-32-bytes!',
    REGISTRY_HEALTH_PROBES: 'false',
    ...extra,
  };
}

/** Claims of a valid access token at NOW; `overrides` with `undefined` values remove a claim. */
export function tokenClaims(overrides: Record<string, unknown> = {}): JWTPayload {
  const claims: Record<string, unknown> = {
    iss: ISSUER,
    aud: AUDIENCE,
    sub: 'agent-client-1',
    iat: NOW_SECONDS,
    exp: NOW_SECONDS + 300,
    jti: randomUUID(),
    scope: 'registry:read registry:write',
    ...overrides,
  };
  for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
  return claims as JWTPayload;
}

/** Signs an access token with `key`; the header gets its alg and kid unless `header` says otherwise. */
export async function signToken(
  key: SigningKey,
  claims: JWTPayload = tokenClaims(),
  header: Record<string, unknown> = {},
): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'at+jwt', ...header })
    .sign(key.privateKey);
}

/** base64url JSON, for hand-built tokens jose refuses to make. */
export function segment(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** A loopback HTTP server; `baseUrl` has no trailing slash. Closed when the test ends. */
export type LocalServer = { baseUrl: string; hits: IncomingMessage[]; close(): Promise<void> };

export async function startServer(
  t: Pick<TestContext, 'after'>,
  handle: (request: IncomingMessage, response: ServerResponse) => void | Promise<void>,
): Promise<LocalServer> {
  const hits: IncomingMessage[] = [];
  const server = createServer((request, response) => {
    hits.push(request);
    void Promise.resolve(handle(request, response)).catch((error: unknown) => {
      response.statusCode = 500;
      response.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  t.after(close);
  return { baseUrl: `http://127.0.0.1:${port}`, hits, close };
}

/** A JWKS endpoint at `<baseUrl>/jwks.json` whose key list the test can change. */
export type JwksServer = LocalServer & { jwksUri: string; keys: Array<Record<string, unknown>> };

export async function startJwksServer(
  t: Pick<TestContext, 'after'>,
  keys: SigningKey[],
): Promise<JwksServer> {
  const published = keys.map((key) => key.jwk);
  const server = await startServer(t, (request, response) => {
    if (request.url !== '/jwks.json') {
      response.statusCode = 404;
      response.end();
      return;
    }
    response.setHeader('content-type', 'application/jwk-set+json');
    response.end(JSON.stringify({ keys: published }));
  });
  return { ...server, jwksUri: `${server.baseUrl}/jwks.json`, keys: published };
}

/** Asserts that `promise` rejects with an AuthFailure of `reason`, and returns it. */
export async function refusedWith(
  promise: Promise<unknown>,
  reason: AuthFailureReason,
): Promise<AuthFailure> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof AuthFailure, `expected an AuthFailure, got ${String(error)}`);
    assert.equal(error.reason, reason, `expected ${reason}, got ${error.reason}: ${error.message}`);
    return error;
  }
  assert.fail(`expected refusal with ${reason}, but it was accepted`);
}

/** An issuer with one RS256, one ES256 and one EdDSA key on a JWKS server, and a verifier judging at NOW. */
export async function issuerSetUp(t: Pick<TestContext, 'after'>, options: Partial<JwtVerifierOptions> = {}) {
  const keys = {
    RS256: makeSigningKey('RS256'),
    ES256: makeSigningKey('ES256'),
    EdDSA: makeSigningKey('EdDSA'),
  };
  const jwks = await startJwksServer(t, Object.values(keys));
  const verifier = createJwtVerifier({
    jwksUri: jwks.jwksUri,
    issuer: ISSUER,
    audience: AUDIENCE,
    now: () => NOW,
    ...options,
  });
  return { keys, jwks, verifier };
}
