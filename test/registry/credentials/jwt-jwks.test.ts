import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { createJwtVerifier } from '../../../src/registry/credentials/jwt-bearer.ts';
import {
  AUDIENCE,
  ISSUER,
  NOW,
  issuerSetUp,
  makeSigningKey,
  refusedWith,
  signToken,
  startJwksServer,
  startServer,
  tokenClaims,
  type SigningKey,
} from './fixtures.ts';

const ALGS = ['RS256', 'ES256', 'EdDSA'] as const;

describe('JWKS fetching for JWT verification', () => {
  it('fetches the JWKS again for an unknown kid and verifies a token signed with a rotated-in key', async (t) => {
    const { keys, jwks, verifier } = await issuerSetUp(t, { cooldownMs: 0 });
    await verifier.verify(await signToken(keys.ES256));
    assert.equal(jwks.hits.length, 1);
    const rotated = makeSigningKey('ES256');
    jwks.keys.push(rotated.jwk);
    const verified = await verifier.verify(await signToken(rotated));
    assert.equal(verified.subject, 'agent-client-1');
    assert.equal(jwks.hits.length, 2);
  });

  it('uses the cached JWKS for known keys', async (t) => {
    const { keys, jwks, verifier } = await issuerSetUp(t);
    for (const alg of ALGS) await verifier.verify(await signToken(keys[alg]));
    assert.equal(jwks.hits.length, 1);
  });

  it('does not refetch the JWKS for each of a flood of made-up kids within the cooldown', async (t) => {
    // Cooldown far longer than the test, so the count below does not depend on how fast it runs.
    const { keys, jwks, verifier } = await issuerSetUp(t, { cooldownMs: 3_600_000 });
    await verifier.verify(await signToken(keys.RS256));
    const attacker = makeSigningKey('ES256');
    for (let i = 0; i < 25; i += 1) {
      await refusedWith(verifier.verify(await signToken({ ...attacker, kid: randomUUID() })), 'unknown_key');
    }
    assert.equal(jwks.hits.length, 1);
  });

  it('ignores a jku header pointing at an attacker JWKS', async (t) => {
    const { keys, verifier } = await issuerSetUp(t);
    const attackerKey = makeSigningKey('ES256');
    const attacker = await startJwksServer(t, [attackerKey]);
    const forged = await signToken(attackerKey, tokenClaims(), { jku: attacker.jwksUri });
    await refusedWith(verifier.verify(forged), 'unknown_key');
    const honest = await signToken(keys.ES256, tokenClaims(), { jku: attacker.jwksUri });
    await verifier.verify(honest);
    assert.equal(attacker.hits.length, 0);
  });

  it('ignores a public key embedded in the token header', async (t) => {
    const { verifier } = await issuerSetUp(t);
    const attackerKey = makeSigningKey('ES256');
    // No kid: the published ES256 key is tried, not the embedded one, so the signature fails.
    const token = await signToken(attackerKey, tokenClaims(), { jwk: attackerKey.jwk, kid: undefined });
    await refusedWith(verifier.verify(token), 'bad_signature');
  });

  it('reports an unreachable JWKS server as unavailable (503), not as a bad token or a crash', async (t) => {
    const key = makeSigningKey('ES256');
    const jwks = await startJwksServer(t, [key]);
    await jwks.close();
    const verifier = createJwtVerifier({
      jwksUri: jwks.jwksUri,
      issuer: ISSUER,
      audience: AUDIENCE,
      now: () => NOW,
    });
    const failure = await refusedWith(verifier.verify(await signToken(key)), 'unavailable');
    assert.equal(failure.status, 503);
  });

  it('reports a JWKS server answering with an error as unavailable', async (t) => {
    const key = makeSigningKey('ES256');
    const broken = await startServer(t, (_request, response) => {
      response.statusCode = 500;
      response.end('{}');
    });
    const verifier = createJwtVerifier({
      jwksUri: `${broken.baseUrl}/jwks.json`,
      issuer: ISSUER,
      audience: AUDIENCE,
      now: () => NOW,
    });
    await refusedWith(verifier.verify(await signToken(key)), 'unavailable');
  });

  it('reports a JWKS server that does not answer within the fetch timeout as unavailable', async (t) => {
    const key = makeSigningKey('ES256');
    const silent = await startServer(t, () => undefined);
    const verifier = createJwtVerifier({
      jwksUri: `${silent.baseUrl}/jwks.json`,
      issuer: ISSUER,
      audience: AUDIENCE,
      now: () => NOW,
      fetchTimeoutMs: 50,
    });
    const failure = await refusedWith(verifier.verify(await signToken(key)), 'unavailable');
    assert.ok(failure.cause !== undefined, 'the cause is kept for the log');
  });

  it('verifies a token without kid against each published key of its type', async (t) => {
    const { keys, jwks, verifier } = await issuerSetUp(t);
    const second = makeSigningKey('ES256');
    jwks.keys.push(second.jwk);
    const unkeyed = (key: SigningKey) =>
      new SignJWT(tokenClaims()).setProtectedHeader({ alg: 'ES256' }).sign(key.privateKey);
    assert.equal((await verifier.verify(await unkeyed(second))).subject, 'agent-client-1');
    assert.equal((await verifier.verify(await unkeyed(keys.ES256))).subject, 'agent-client-1');
    await refusedWith(verifier.verify(await unkeyed(makeSigningKey('ES256'))), 'bad_signature');
  });
});
