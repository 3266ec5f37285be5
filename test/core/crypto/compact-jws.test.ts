/**
 * Compact JWS made with node:crypto (compact-jws.ts) is what jose verifies, for every signing
 * algorithm the registry offers, with non-ASCII payloads and the protected header as given.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compactVerify, exportJWK, generateKeyPair, importJWK } from 'jose';
import { signCompact, signingKeyFromJwk } from '../../../src/core/crypto/compact-jws.ts';

test('jose verifies what signCompact signs: ES256, EdDSA and RS256', async () => {
  for (const alg of ['ES256', 'EdDSA', 'RS256'] as const) {
    const pair = await generateKeyPair(alg, { extractable: true, ...(alg === 'EdDSA' ? { crv: 'Ed25519' } : {}) });
    const privateJwk = await exportJWK(pair.privateKey);
    const publicKey = await importJWK(await exportJWK(pair.publicKey), alg);
    const payload = { name: 'Hôpital Saint-Louis — 東京', results: Array.from({ length: 500 }, (_, i) => ({ i, padding: 'x'.repeat(i % 97) })) };
    const jws = signCompact(Buffer.from(JSON.stringify(payload)), { alg, kid: 'k1', typ: 'ward-test+jwt' }, signingKeyFromJwk(privateJwk));
    const verified = await compactVerify(jws, publicKey);
    assert.deepEqual(verified.protectedHeader, { alg, kid: 'k1', typ: 'ward-test+jwt' });
    assert.deepEqual(JSON.parse(new TextDecoder().decode(verified.payload)), payload);
    // A changed payload fails verification.
    const [header, body, signature] = jws.split('.') as [string, string, string];
    const tampered = `${header}.${Buffer.from(JSON.stringify({ ...payload, name: 'x' })).toString('base64url')}.${signature}`;
    await assert.rejects(compactVerify(tampered, publicKey));
    assert.ok(!body.includes('='), 'base64url without padding');
  }
});
