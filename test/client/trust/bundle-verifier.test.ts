import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CompactSign, exportJWK, generateKeyPair } from 'jose';
import { BUNDLE_LIFETIME_MS } from '../../../src/contract/trust-bundle.ts';
import { verifyTrustBundle } from '../../../src/client/trust/bundle-verifier.ts';
import { buildTestRegistry, registerAgent } from '../../helpers/registry.ts';

async function fixture(t: Parameters<typeof buildTestRegistry>[0]) {
  const registry = await buildTestRegistry(t, 'sqlite');
  const agent = await registerAgent(registry);
  const bundle = (await registry.call({ method: 'GET', url: `/v1/trust/bundle?subject=${encodeURIComponent(agent.agent_id)}` })).body;
  const jwks = (await registry.call({ method: 'GET', url: '/.well-known/jwks.json' })).body;
  return { registry, agent, bundle, anchor: { jwks, registry_id: 'registry://gb/registries/local' } };
}

const codes = (result: { errors: Array<{ code: string }> }) => result.errors.map((e) => e.code);

describe('trust bundle verification', () => {
  test('a fresh bundle verifies offline against the registry anchor', async (t) => {
    const { agent, bundle, anchor } = await fixture(t);
    const { steps: _steps, ...verdict } = await verifyTrustBundle(bundle, anchor);
    assert.deepEqual(verdict, { valid: true, subject: agent.agent_id, errors: [] });
    assert.equal(Date.parse(bundle.expires_at) - Date.parse(bundle.issued_at), BUNDLE_LIFETIME_MS);
  });

  test('a tampered field is detected', async (t) => {
    const { bundle, anchor } = await fixture(t);
    const tampered = { ...bundle, certificates: ['-----BEGIN CERTIFICATE-----\nMIIB…'] };
    assert.deepEqual(codes(await verifyTrustBundle(tampered, anchor)), ['BUNDLE_TAMPERED']);
    const resubject = { ...bundle, subject: 'registry://gb/agents/01J00000000000000000000000' };
    assert.deepEqual(codes(await verifyTrustBundle(resubject, anchor)), ['BUNDLE_TAMPERED']);
  });

  test('an expired or not-yet-valid bundle is refused', async (t) => {
    const { bundle, anchor } = await fixture(t);
    const later = new Date(Date.parse(bundle.expires_at) + 120_000);
    assert.deepEqual(codes(await verifyTrustBundle(bundle, anchor, later)), ['BUNDLE_EXPIRED']);
    const earlier = new Date(Date.parse(bundle.issued_at) - 120_000);
    // Then the registry's key did not exist yet either, and a key outside its window verifies nothing.
    assert.deepEqual(codes(await verifyTrustBundle(bundle, anchor, earlier)), ['KEY_NOT_YET_VALID']);
    const openWindow = { ...anchor, jwks: { keys: anchor.jwks.keys.map(({ not_before: _from, ...key }: Record<string, unknown>) => key) } };
    assert.deepEqual(codes(await verifyTrustBundle(bundle, openWindow, earlier)), ['BUNDLE_NOT_YET_VALID']);
  });

  test("another registry's anchor does not verify it, nor does a key named by a jku header", async (t) => {
    const { bundle, anchor } = await fixture(t);
    const other = await fixture(t);
    assert.deepEqual(codes(await verifyTrustBundle(bundle, other.anchor)), ['BUNDLE_KEY_UNKNOWN']);
    // An attacker re-signs the bundle with its own key and points jku at its own JWKS, reusing the kid.
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const { signed_bundle: _sig, ...fields } = bundle;
    const forged = await new CompactSign(new TextEncoder().encode(JSON.stringify(fields)))
      .setProtectedHeader({ alg: 'ES256', typ: 'ward-trust-bundle+jwt', kid: anchor.jwks.keys[0].kid, jku: 'https://attacker.example/jwks.json', jwk: await exportJWK(publicKey) })
      .sign(privateKey);
    // The key-offering header is refused in its own right; the anchor's key still does not verify it.
    assert.deepEqual(codes(await verifyTrustBundle({ ...fields, signed_bundle: forged }, anchor)), ['KEY_URL_REFUSED', 'BUNDLE_SIGNATURE_INVALID']);
  });

  test('a chain that does not start at the anchor registry is refused', async (t) => {
    const { bundle, anchor } = await fixture(t);
    assert.deepEqual(codes(await verifyTrustBundle(bundle, { ...anchor, registry_id: 'registry://fr/registries/ans' })), ['CHAIN_MISMATCH']);
  });

  test('anything that is not a signed bundle is malformed', async () => {
    for (const value of [null, 'x', {}, { signed_bundle: 'a.b.c', subject: 's', issuer: 'i', issued_at: 'x', expires_at: 'y', delegation_chain: [], statements: [] }]) {
      const result = await verifyTrustBundle(value, { jwks: { keys: [] } });
      assert.equal(result.valid, false);
    }
  });

  test('the registry bundle carries its JWKS; unknown registries and bad subjects are refused', async (t) => {
    const { registry, anchor } = await fixture(t);
    const own = await registry.call({ method: 'GET', url: `/v1/trust/bundle?subject=${encodeURIComponent('registry://gb/registries/local')}` });
    assert.equal(own.status, 200);
    assert.deepEqual(own.body.jwks, anchor.jwks);
    assert.equal((await verifyTrustBundle(own.body, anchor)).valid, true);
    const unknown = await registry.call({ method: 'GET', url: `/v1/trust/bundle?subject=${encodeURIComponent('registry://fr/registries/ans')}` });
    assert.equal(unknown.body.error.code, 'REGISTRY_NOT_FOUND');
    const bad = await registry.call({ method: 'GET', url: '/v1/trust/bundle?subject=whatever' });
    assert.equal(bad.status, 422);
    const missing = await registry.call({ method: 'GET', url: `/v1/trust/bundle?subject=${encodeURIComponent('registry://gb/agents/01J00000000000000000000000')}` });
    assert.equal(missing.status, 404);
  });

  test('trust anchors list the signing key with its validity window', async (t) => {
    const { registry, anchor } = await fixture(t);
    const { anchors } = (await registry.call({ method: 'GET', url: '/v1/trust/anchors' })).body;
    assert.equal(anchors.length, 1);
    assert.equal(anchors[0].key_id, anchor.jwks.keys[0].kid);
    assert.equal(anchors[0].alg, 'ES256');
    assert.equal(anchors[0].role, 'root');
    assert.match(anchors[0].jwks_uri, /\/\.well-known\/jwks\.json$/);
  });
});
