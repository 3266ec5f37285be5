import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { sign } from 'node:crypto';
import { describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { AuthFailure } from '../../../src/registry/credentials/auth-failure.ts';
import { assertNotSenderConstrained, createJwtVerifier } from '../../../src/registry/credentials/jwt-bearer.ts';
import {
  AUDIENCE,
  ISSUER,
  NOW_SECONDS,
  issuerSetUp,
  makeSigningKey,
  refusedWith,
  segment,
  signToken,
  tokenClaims,
} from './fixtures.ts';

const ALGS = ['RS256', 'ES256', 'EdDSA'] as const;

describe('JWT bearer verification', () => {
  for (const alg of ALGS) {
    it(`accepts a valid ${alg} token and reads its subject, scopes and id`, async (t) => {
      const { keys, verifier } = await issuerSetUp(t);
      const claims = tokenClaims();
      const verified = await verifier.verify(await signToken(keys[alg], claims));
      assert.equal(verified.subject, 'agent-client-1');
      assert.deepEqual(verified.scopes, ['registry:read', 'registry:write']);
      assert.equal(verified.tokenId, claims.jti);
      assert.equal(verified.claims.iss, ISSUER);
    });
  }

  it('reads scopes from an scp array and derives a token id that is not the token when jti is absent', async (t) => {
    const { keys, verifier } = await issuerSetUp(t);
    const token = await signToken(
      keys.ES256,
      tokenClaims({ scope: undefined, scp: ['registry:admin'], jti: undefined }),
    );
    const verified = await verifier.verify(token);
    assert.deepEqual(verified.scopes, ['registry:admin']);
    assert.match(verified.tokenId, /^[A-Za-z0-9_-]{43}$/);
    assert.ok(!token.includes(verified.tokenId));
  });

  it('refuses a token whose payload was changed after signing', async (t) => {
    const { keys, verifier } = await issuerSetUp(t);
    const [header, , signature] = (await signToken(keys.RS256)).split('.');
    const forged = `${header}.${segment(tokenClaims({ sub: 'admin', scope: 'registry:admin' }))}.${signature}`;
    await refusedWith(verifier.verify(forged), 'bad_signature');
  });

  it('refuses a token signed by another key that claims a published kid', async (t) => {
    const { keys, verifier } = await issuerSetUp(t);
    const impostor = { ...makeSigningKey('ES256'), kid: keys.ES256.kid };
    await refusedWith(verifier.verify(await signToken(impostor)), 'bad_signature');
  });

  it('refuses an unsecured token (alg none)', async (t) => {
    const { keys, verifier } = await issuerSetUp(t);
    const token = `${segment({ alg: 'none', kid: keys.RS256.kid })}.${segment(tokenClaims())}.`;
    await refusedWith(verifier.verify(token), 'alg_not_allowed');
  });

  it('refuses an HS256 token keyed with the RSA public key (algorithm confusion)', async (t) => {
    const { keys, verifier } = await issuerSetUp(t);
    const publicPem = keys.RS256.publicKey.export({ format: 'pem', type: 'spki' });
    const token = await new SignJWT(tokenClaims())
      .setProtectedHeader({ alg: 'HS256', kid: keys.RS256.kid })
      .sign(new TextEncoder().encode(String(publicPem)));
    await refusedWith(verifier.verify(token), 'alg_not_allowed');
  });

  it('refuses algorithms outside RS256, ES256 and EdDSA even with a valid signature', async (t) => {
    const { keys, verifier } = await issuerSetUp(t);
    const ps256 = await new SignJWT(tokenClaims())
      .setProtectedHeader({ alg: 'PS256', kid: keys.RS256.kid })
      .sign(keys.RS256.privateKey);
    await refusedWith(verifier.verify(ps256), 'alg_not_allowed');
  });

  it('accepts a token expired by less than the 60 s skew and refuses one expired by more', async (t) => {
    const { keys, verifier } = await issuerSetUp(t);
    await verifier.verify(await signToken(keys.ES256, tokenClaims({ exp: NOW_SECONDS - 59 })));
    const failure = await refusedWith(
      verifier.verify(await signToken(keys.ES256, tokenClaims({ exp: NOW_SECONDS - 61 }))),
      'expired',
    );
    assert.equal(failure.status, 401);
  });

  it('refuses a token that is not valid yet beyond the skew and accepts one within it', async (t) => {
    const { keys, verifier } = await issuerSetUp(t);
    await verifier.verify(await signToken(keys.ES256, tokenClaims({ nbf: NOW_SECONDS + 59 })));
    await refusedWith(
      verifier.verify(await signToken(keys.ES256, tokenClaims({ nbf: NOW_SECONDS + 61 }))),
      'not_yet_valid',
    );
  });

  it('refuses a token from another issuer', async (t) => {
    const { keys, verifier } = await issuerSetUp(t);
    await refusedWith(
      verifier.verify(await signToken(keys.EdDSA, tokenClaims({ iss: 'https://evil.test' }))),
      'wrong_issuer',
    );
  });

  it('refuses a token meant for another audience', async (t) => {
    const { keys, verifier } = await issuerSetUp(t);
    const token = await signToken(keys.EdDSA, tokenClaims({ aud: ['https://other.test'] }));
    await refusedWith(verifier.verify(token), 'wrong_audience');
  });

  it('refuses a token without exp or without sub', async (t) => {
    const { keys, verifier } = await issuerSetUp(t);
    await refusedWith(
      verifier.verify(await signToken(keys.ES256, tokenClaims({ exp: undefined }))),
      'malformed',
    );
    await refusedWith(
      verifier.verify(await signToken(keys.ES256, tokenClaims({ sub: undefined }))),
      'malformed',
    );
  });

  it('refuses text that is not a JWT, and an oversized one, without echoing it', async (t) => {
    const { verifier } = await issuerSetUp(t);
    const failure = await refusedWith(verifier.verify('not-a-secret-jwt'), 'malformed');
    assert.ok(!failure.message.includes('not-a-secret-jwt'));
    await refusedWith(verifier.verify('a'.repeat(20_000)), 'malformed');
  });

  // Regression (security campaign, finding 3): an unknown `crit` header member escaped as a 500.
  it('refuses a token with an unknown critical header member as malformed, signed or not', async (t) => {
    const { keys, verifier } = await issuerSetUp(t);
    const crafted = `${segment({ alg: 'RS256', kid: 'x', crit: ['zzz'], zzz: 1 })}.${segment({ sub: 'a' })}.AAAA`;
    await refusedWith(verifier.verify(crafted), 'malformed');
    // jose will not sign such a header either, so node:crypto signs it: the signature is genuine.
    const input = `${segment({ alg: 'ES256', kid: keys.ES256.kid, crit: ['zzz'], zzz: 1 })}.${segment(tokenClaims())}`;
    const signature = sign('sha256', Buffer.from(input), { key: keys.ES256.privateKey, dsaEncoding: 'ieee-p1363' });
    const signed = `${input}.${signature.toString('base64url')}`;
    const failure = await refusedWith(verifier.verify(signed), 'malformed');
    assert.ok(!failure.message.includes('zzz'), 'the attacker-chosen name is not echoed');
  });

  it('refuses a token signed with a kid the issuer does not publish', async (t) => {
    const { verifier } = await issuerSetUp(t);
    await refusedWith(verifier.verify(await signToken(makeSigningKey('ES256'))), 'unknown_key');
  });

  it('reports failures under the DPoP scheme when configured for DPoP-bound tokens', async (t) => {
    const { verifier } = await issuerSetUp(t, { scheme: 'DPoP' });
    const failure = await refusedWith(verifier.verify('x.y.z'), 'malformed');
    assert.equal(failure.scheme, 'DPoP');
  });

  it('refuses options that cannot be right at once', () => {
    assert.throws(
      () => createJwtVerifier({ jwksUri: 'file:///etc/jwks.json', issuer: ISSUER, audience: AUDIENCE }),
      /http/,
    );
    assert.throws(
      () => createJwtVerifier({ jwksUri: 'https://issuer.test/jwks', issuer: '', audience: AUDIENCE }),
      /issuer/,
    );
  });
});

describe('sender-constrained tokens presented as Bearer', () => {
  it('refuses a token bound to a DPoP key or to a certificate and accepts an unbound one', () => {
    assert.throws(
      () => assertNotSenderConstrained({ cnf: { jkt: 'abc' } }),
      (error: unknown) => error instanceof AuthFailure && error.reason === 'scheme_mismatch',
    );
    assert.throws(() => assertNotSenderConstrained({ cnf: { 'x5t#S256': 'abc' } }), AuthFailure);
    assertNotSenderConstrained({ sub: 'agent' });
  });
});
