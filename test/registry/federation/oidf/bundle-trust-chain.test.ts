// One chain (issue #31 item 5): an organisation agent's trust bundle carries the organisation's
// OpenID Federation trust chain to the root, and verifyTrustBundle checks it with nothing but the
// root's keys: alone (a bundle without Ward's delegation statements, as after the migration) and
// beside the statements. Online, a superior that no longer issues its statement (revocation) fails
// the bundle; a key rolled over shows in a rebuilt chain. In-process on each backend, tiers on loopback.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import type { SignedTrustBundle } from '../../../../src/contract/trust-bundle.ts';
import { TRUST_CHAIN_STEP, verifyTrustBundle, type BundleVerification } from '../../../../src/client/trust/bundle-verifier.ts';
import { eventually } from '../../../helpers/eventually.ts';
import { rootAnchor, threeTiers, type RunningRegistry, trustBundleOf as bundleOf, resignedBundle as resigned } from '../../../helpers/federation.ts';
import { BACKENDS, registerAgent, writeHeaders } from '../../../helpers/registry.ts';
import { makeCertificate } from '../../agents/evidence/fixtures.ts';

const codes = (result: BundleVerification) => result.errors.map((error) => error.code);
const chainStep = (result: BundleVerification) => result.steps.find((step) => step.name === TRUST_CHAIN_STEP);

/** The OIDF-only form of `bundle`: no delegation statements, the chain alone proves the issuer. */
const oidfOnly = (issuer: RunningRegistry, bundle: SignedTrustBundle) => resigned(issuer, bundle, { statements: [], delegation_chain: [issuer.id] });

for (const backend of BACKENDS) {
  describe(`trust bundles carry the OpenID Federation chain [${backend}]`, () => {
    test('an organisation agent’s bundle (and its routing advice) verifies back to the root through its OIDF chain with only the root’s keys', async (t) => {
      const { root, sovereign, org } = await threeTiers(t, backend);
      const agent = await registerAgent(org, { trust: { certificates: [makeCertificate().pem], signatures: [], attestations: [] } });
      const bundle = await bundleOf(org, agent.agent_id);
      assert.deepEqual(
        (bundle.trust_chain ?? []).map((jwt) => [decodeJwt(jwt).iss, decodeJwt(jwt).sub]),
        [[org.baseUrl, org.baseUrl], [sovereign.baseUrl, org.baseUrl], [root.baseUrl, sovereign.baseUrl], [root.baseUrl, root.baseUrl]],
      );
      const keysOnly = { jwks: (await rootAnchor(root)).jwks };
      const both = await verifyTrustBundle(bundle, keysOnly);
      assert.deepEqual(codes(both), []);
      assert.equal(chainStep(both)?.status, 'passed');

      const alone = await oidfOnly(org, bundle);
      const result = await verifyTrustBundle(alone, keysOnly);
      assert.deepEqual([result.valid, codes(result)], [true, []]);
      assert.equal(chainStep(result)?.status, 'passed');
      assert.ok(result.steps.some((step) => step.name === 'Bundle signature' && step.status === 'passed'));
      assert.ok(!result.steps.some((step) => step.name.startsWith('Statement ')), 'no delegation statement was needed');

      // Another registry's keys anchor nothing; the anchor named must be the chain's top.
      const sovereignKeys = { jwks: (await rootAnchor(sovereign)).jwks };
      assert.deepEqual(codes(await verifyTrustBundle(alone, sovereignKeys)), ['TRUST_CHAIN_INVALID']);
      assert.deepEqual(codes(await verifyTrustBundle(alone, { ...keysOnly, registry_id: sovereign.id })), ['CHAIN_MISMATCH']);
      // A chain that is about another registry than the issuer (the sovereign's bundle's chain, re-used):
      // it proves the sovereign's keys, which signed neither the organisation's bundle nor its marks.
      const sovereignAgent = await registerAgent(sovereign);
      const foreignChain = (await bundleOf(sovereign, sovereignAgent.agent_id)).trust_chain;
      assert.deepEqual(codes(await verifyTrustBundle(await resigned(org, alone, { trust_chain: foreignChain as string[] }), keysOnly)), ['CHAIN_MISMATCH', 'BUNDLE_KEY_UNKNOWN', 'TRUST_MARK_INVALID']);
      // A trust mark altered inside a genuinely signed bundle.
      const [mark] = alone.trust_marks ?? [];
      assert.equal(mark?.trust_mark_type, 'urn:ward:trust-mark:trust-validated');
      const forged = await resigned(org, alone, { trust_marks: [{ trust_mark_type: mark.trust_mark_type, trust_mark: `${mark.trust_mark.slice(0, -4)}AAAA` }] });
      assert.deepEqual(codes(await verifyTrustBundle(forged, keysOnly)), ['TRUST_MARK_INVALID']);
      const misfiled = await resigned(org, alone, { trust_marks: [{ trust_mark_type: 'urn:ward:trust-mark:attested', trust_mark: mark.trust_mark }] });
      assert.deepEqual(codes(await verifyTrustBundle(misfiled, keysOnly)), ['TRUST_MARK_INVALID']);
      // Routing advice carries the same bundle: the chain and the agent's marks, verifying alike.
      const routed = await org.call({ method: 'POST', url: '/v1/route', payload: { target: agent.agent_id } });
      assert.equal(routed.status, 200, JSON.stringify(routed.body));
      const advised = routed.body.trust_bundle as SignedTrustBundle;
      assert.deepEqual(advised.trust_chain?.map((jwt) => decodeJwt(jwt).sub), [org.baseUrl, org.baseUrl, sovereign.baseUrl, root.baseUrl]);
      assert.deepEqual(advised.trust_marks?.map((entry) => entry.trust_mark_type), ['urn:ward:trust-mark:trust-validated']);
      const fromAdvice = await verifyTrustBundle(await oidfOnly(org, advised), keysOnly);
      assert.deepEqual([codes(fromAdvice), chainStep(fromAdvice)?.status], [[], 'passed']);
      // Past the statements' lifetime the chain no longer stands.
      const later = new Date(Date.now() + (org.app.ward.config.REGISTRY_DELEGATION_TTL_SECONDS + 120) * 1000);
      assert.deepEqual(codes(await verifyTrustBundle(alone, keysOnly, later)), ['TRUST_CHAIN_INVALID']);
    });

    test('online, a revoked organisation fails: its superior no longer issues the statement the chain holds', async (t) => {
      const { root, sovereign, org } = await threeTiers(t, backend);
      const agent = await registerAgent(org);
      const alone = await oidfOnly(org, await bundleOf(org, agent.agent_id));
      const anchor = { jwks: (await rootAnchor(root)).jwks };
      assert.deepEqual(codes(await verifyTrustBundle(alone, anchor, new Date(), { online: {} })), []);
      const revoked = await sovereign.call({ method: 'POST', url: `/v1/registries/${encodeURIComponent(org.id)}/revoke`, headers: writeHeaders(), payload: { reason: 'contract ended' } });
      assert.equal(revoked.status, 200);
      assert.deepEqual(codes(await verifyTrustBundle(alone, anchor)), [], 'offline the copy stands until its statements expire');
      assert.deepEqual(codes(await verifyTrustBundle(alone, anchor, new Date(), { online: {} })), ['STATEMENT_REVOKED']);
    });

    test('after a key rollover the organisation’s new bundles verify through a rebuilt chain naming the new key', async (t) => {
      const { root, org } = await threeTiers(t, backend);
      const agent = await registerAgent(org);
      const anchor = { jwks: (await rootAnchor(root)).jwks };
      await bundleOf(org, agent.agent_id);
      const rotated = await org.call({ method: 'POST', url: '/v1/trust/keys/rotate', headers: writeHeaders(), payload: { retire_after_seconds: 0 } });
      assert.equal(rotated.status, 201, JSON.stringify(rotated.body));
      const newKid = rotated.body.key_id as string;
      const bundle = await eventually(async () => {
        const candidate = await bundleOf(org, agent.agent_id);
        const statement = decodeJwt((candidate.trust_chain ?? [])[1] ?? 'x.e30.x');
        return (statement.jwks as { keys: Array<{ kid: string }> } | undefined)?.keys.some((key) => key.kid === newKid) ? candidate : undefined;
      }, 'a bundle whose chain names the new key');
      const result = await verifyTrustBundle(await oidfOnly(org, bundle), anchor);
      assert.deepEqual(codes(result), []);
    });
  });
}
