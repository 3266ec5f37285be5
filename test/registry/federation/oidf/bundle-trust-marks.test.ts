// A trust bundle's trust marks as verifyTrustBundle judges them through the OIDF trust chain (issue #31):
// offline, the trust anchor's `trust_mark_issuers` (in the root's configuration, the chain's last element)
// must recognise the issuer for the mark's type, as the resolver's rule says; online, each mark's issuer is
// asked at the `federation_trust_mark_status_endpoint` its configuration in the chain names, and only a
// verified answer counts. Real registries on loopback, in-process on each backend; the variations of the
// chain are signed with the registries' own keys.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import { ENTITY_STATEMENT_TYP } from '../../../../src/contract/openid-federation.ts';
import { TRUST_MARK_TYP } from '../../../../src/contract/oidf-trust-marks.ts';
import type { SignedTrustBundle } from '../../../../src/contract/trust-bundle.ts';
import { TRUST_MARKS_STEP, TRUST_MARK_STATUS_STEP, verifyTrustBundle, type BundleVerification } from '../../../../src/client/trust/bundle-verifier.ts';
import { rootAnchor, threeTiers, type RunningRegistry, trustBundleOf as bundleOf, resignedBundle as resigned } from '../../../helpers/federation.ts';
import { BACKENDS, registerAgent, ulidOf, writeHeaders } from '../../../helpers/registry.ts';
import { makeCertificate } from '../../agents/evidence/fixtures.ts';

const VALIDATED = 'urn:ward:trust-mark:trust-validated';
const ATTESTED = 'urn:ward:trust-mark:attested';
const ONLINE = { online: {} };

const codes = (result: BundleVerification) => result.errors.map((error) => error.code);
const stepOf = (result: BundleVerification, name: string) => result.steps.find((step) => step.name === name);

/** The bundle's chain with its statement at `index` re-signed by `signer` after `change` (a genuine statement of another content). */
async function withStatement(bundle: SignedTrustBundle, index: number, signer: RunningRegistry, change: (claims: Record<string, any>) => void): Promise<string[]> {
  const chain = [...(bundle.trust_chain ?? [])];
  const claims = structuredClone(decodeJwt(chain.at(index) as string)) as Record<string, any>;
  change(claims);
  chain[index < 0 ? chain.length + index : index] = await signer.app.ward.signer.sign(claims, ENTITY_STATEMENT_TYP);
  return chain;
}

/** A loopback address nobody listens on (a port bound and released). */
async function deadAddress(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/v1/oidf/trust-mark-status`;
}

/** Three tiers and an organisation agent with a certificate (so its bundle carries the trust-validated mark), in the OIDF-only form. */
async function markedBundle(t: Parameters<typeof threeTiers>[0], backend: (typeof BACKENDS)[number]) {
  const tiers = await threeTiers(t, backend);
  const agent = await registerAgent(tiers.org, { trust: { certificates: [makeCertificate().pem], signatures: [], attestations: [] } });
  const full = await bundleOf(tiers.org, agent.agent_id);
  assert.deepEqual(full.trust_marks?.map((entry) => entry.trust_mark_type), [VALIDATED]);
  const alone = await resigned(tiers.org, full, { statements: [], delegation_chain: [tiers.org.id] });
  // The OIDF-only form needs nothing but the root's keys; Ward's statements are asked about online at the root's address.
  const wardAnchor = await rootAnchor(tiers.root);
  return { ...tiers, agent, full, alone, anchor: { jwks: wardAnchor.jwks }, wardAnchor };
}

for (const backend of BACKENDS) {
  describe(`a trust bundle's trust marks: the anchor's trust_mark_issuers and the issuer's status [${backend}]`, () => {
    test('a good mark passes offline and online; the anchor’s trust_mark_issuers decides which issuers count', async (t) => {
      const { root, sovereign, org, full, alone, anchor, wardAnchor } = await markedBundle(t, backend);
      assert.deepEqual(decodeJwt((alone.trust_chain ?? []).at(-1) as string).trust_mark_issuers, {
        [VALIDATED]: [],
        [ATTESTED]: [],
        'urn:ward:trust-mark:delegated-registry': [root.baseUrl, sovereign.baseUrl],
      });
      const offline = await verifyTrustBundle(alone, anchor);
      assert.deepEqual([offline.valid, codes(offline), stepOf(offline, TRUST_MARKS_STEP)?.status], [true, [], 'passed']);
      assert.equal(stepOf(offline, TRUST_MARK_STATUS_STEP), undefined, 'offline asks nobody');
      for (const [bundle, by] of [[alone, anchor], [full, wardAnchor]] as const) {
        const online = await verifyTrustBundle(bundle, by, new Date(), ONLINE);
        assert.deepEqual(codes(online), []);
        assert.deepEqual([stepOf(online, TRUST_MARK_STATUS_STEP)?.status, stepOf(online, TRUST_MARK_STATUS_STEP)?.detail], ['passed', `${VALIDATED}: active`]);
      }

      // The root's configuration as the root could sign it with another table (the anchor's word, verified with its pinned keys).
      const underTable = async (table: Record<string, string[]> | undefined) => {
        const chain = await withStatement(alone, -1, root, (claims) => {
          if (table === undefined) delete claims.trust_mark_issuers;
          else claims.trust_mark_issuers = table;
        });
        return resigned(org, alone, { trust_chain: chain });
      };
      const excluded = await underTable({ [VALIDATED]: [sovereign.baseUrl] });
      const refused = await verifyTrustBundle(excluded, anchor);
      assert.deepEqual(codes(refused), ['TRUST_MARK_ISSUER_NOT_ALLOWED']);
      assert.match(refused.errors[0]?.message ?? '', new RegExp(`lets only ${sovereign.baseUrl} issue ${VALIDATED}, not ${org.baseUrl}`));
      assert.equal(stepOf(refused, TRUST_MARKS_STEP)?.status, 'failed');
      // Online, a mark the anchor does not honour is not asked about: the offline finding is the answer.
      const refusedOnline = await verifyTrustBundle(excluded, anchor, new Date(), ONLINE);
      assert.deepEqual([codes(refusedOnline), stepOf(refusedOnline, TRUST_MARK_STATUS_STEP)?.detail], [['TRUST_MARK_ISSUER_NOT_ALLOWED'], 'no mark to ask about']);
      // A type the anchor does not list at all, and a table that is not one, honour nobody.
      assert.deepEqual(codes(await verifyTrustBundle(await underTable({ [ATTESTED]: [] }), anchor)), ['TRUST_MARK_ISSUER_NOT_ALLOWED']);
      assert.deepEqual(codes(await verifyTrustBundle(await underTable([] as unknown as Record<string, string[]>), anchor)), ['TRUST_MARK_ISSUER_NOT_ALLOWED']);
      // Listed by name, or no table published at all (judged as before the anchor had one): valid.
      assert.deepEqual(codes(await verifyTrustBundle(await underTable({ [VALIDATED]: [sovereign.baseUrl, org.baseUrl] }), anchor)), []);
      const noTable = await verifyTrustBundle(await underTable(undefined), anchor, new Date(), ONLINE);
      assert.deepEqual([codes(noTable), stepOf(noTable, TRUST_MARKS_STEP)?.detail], [[], `${VALIDATED}; the trust anchor publishes no trust_mark_issuers (any issuer)`]);
      // The table is read from a chain validated with the anchor's keys: one the organisation signs in the root's place breaks the chain.
      const forgedAnchor = await resigned(org, alone, { trust_chain: await withStatement(alone, -1, org, (claims) => (claims.trust_mark_issuers = { [VALIDATED]: [] })) });
      assert.deepEqual(codes(await verifyTrustBundle(forgedAnchor, anchor)), ['TRUST_CHAIN_INVALID']);
    });

    test('online, a suspended agent’s bundle issued before the suspension fails with TRUST_MARK_REVOKED; a mark its issuer disowns is TRUST_MARK_INVALID', async (t) => {
      const { org, agent, full, alone, anchor, wardAnchor } = await markedBundle(t, backend);
      // A mark the organisation signed but cannot stand behind (it names no agent by id): the issuer says `invalid`.
      const [entry] = alone.trust_marks ?? [];
      const { ward_agent_id: _id, ...anonymous } = decodeJwt(entry?.trust_mark as string);
      const disowned = await resigned(org, alone, { trust_marks: [{ trust_mark_type: VALIDATED, trust_mark: await org.app.ward.signer.sign(anonymous, TRUST_MARK_TYP) }] });
      assert.deepEqual(codes(await verifyTrustBundle(disowned, anchor)), [], 'offline nothing tells it apart');
      const invalid = await verifyTrustBundle(disowned, anchor, new Date(), ONLINE);
      assert.deepEqual([codes(invalid), stepOf(invalid, TRUST_MARK_STATUS_STEP)?.detail], [['TRUST_MARK_INVALID'], `${VALIDATED}: invalid`]);

      const suspended = await org.call({ method: 'POST', url: `/v1/agents/${ulidOf(agent.agent_id)}/suspend`, headers: writeHeaders(), payload: { reason: 'security review' } });
      assert.equal(suspended.status, 200, JSON.stringify(suspended.body));
      assert.deepEqual(codes(await verifyTrustBundle(alone, anchor)), [], 'offline the copy stands until its marks expire');
      for (const [bundle, by] of [[alone, anchor], [full, wardAnchor]] as const) {
        const result = await verifyTrustBundle(bundle, by, new Date(), ONLINE);
        assert.deepEqual(codes(result), ['TRUST_MARK_REVOKED']);
        assert.match(result.errors[0]?.message ?? '', new RegExp(`trust mark 1 \\(${VALIDATED}\\): ${org.baseUrl} says it is revoked`));
        assert.equal(stepOf(result, TRUST_MARK_STATUS_STEP)?.detail, `${VALIDATED}: revoked`);
      }
    });

    test('online, a status endpoint that cannot be reached, answers unverifiably or is not named gives STATUS_UNAVAILABLE', async (t) => {
      const { sovereign, org, alone, anchor } = await markedBundle(t, backend);
      // The organisation's configuration (ES[0], signed with its own key) naming another status endpoint.
      const withEndpoint = async (endpoint: string | undefined) => {
        const chain = await withStatement(alone, 0, org, (claims) => {
          if (endpoint === undefined) delete claims.metadata.federation_entity.federation_trust_mark_status_endpoint;
          else claims.metadata.federation_entity.federation_trust_mark_status_endpoint = endpoint;
        });
        return resigned(org, alone, { trust_chain: chain });
      };
      const cases = [
        [await deadAddress(), /could not be reached/],
        // The sovereign answers, signed with its own key: not the organisation's word about its mark.
        [`${sovereign.baseUrl}/v1/oidf/trust-mark-status`, /does not verify with/],
        // Not a status endpoint: the organisation's configuration, which takes no POST.
        [`${org.baseUrl}/.well-known/openid-federation`, /answered HTTP 404/],
        [undefined, /names no federation_trust_mark_status_endpoint/],
        ['file:///etc/passwd', /not an http\(s\) URL/],
      ] as const;
      for (const [endpoint, why] of cases) {
        const bundle = await withEndpoint(endpoint);
        assert.deepEqual(codes(await verifyTrustBundle(bundle, anchor)), [], `offline ${String(endpoint)} is not asked`);
        const result = await verifyTrustBundle(bundle, anchor, new Date(), { online: { timeoutMs: 2000 } });
        assert.deepEqual(codes(result), ['STATUS_UNAVAILABLE'], String(endpoint));
        assert.match(result.errors[0]?.message ?? '', why, String(endpoint));
        assert.equal(stepOf(result, TRUST_MARK_STATUS_STEP)?.status, 'failed');
      }
    });

    test("the root's own agents: their bundles carry the root's configuration as the chain, so their marks are judged too", async (t) => {
      const { root, sovereign } = await threeTiers(t, backend);
      const agent = await registerAgent(root, { trust: { certificates: [makeCertificate().pem], signatures: [], attestations: [] } });
      const bundle = await bundleOf(root, agent.agent_id);
      assert.deepEqual(bundle.trust_chain?.map((jwt) => decodeJwt(jwt).sub), [root.baseUrl], 'a trust anchor’s chain is its configuration alone');
      // Without marks there is nothing the chain is needed for: it is left out (its bytes repeat in routing advice).
      const unmarked = await bundleOf(root, (await registerAgent(root, {})).agent_id);
      assert.deepEqual([unmarked.trust_marks, unmarked.trust_chain], [[], undefined]);
      assert.deepEqual(bundle.trust_marks?.map((entry) => entry.trust_mark_type), [VALIDATED]);
      const anchor = { jwks: (await rootAnchor(root)).jwks };
      const online = await verifyTrustBundle(bundle, anchor, new Date(), ONLINE);
      assert.deepEqual([online.valid, codes(online), stepOf(online, TRUST_MARK_STATUS_STEP)?.status], [true, [], 'passed']);
      // Only the root's keys will do: the sovereign's are refused.
      const byOther = await verifyTrustBundle(bundle, { jwks: (await rootAnchor(sovereign)).jwks });
      assert.equal(byOther.valid, false);
      // Suspended after the bundle was issued: still valid offline, revoked at the root's status endpoint.
      const suspended = await root.call({ method: 'POST', url: `/v1/agents/${ulidOf(agent.agent_id)}/suspend`, headers: writeHeaders(), payload: { reason: 'security review' } });
      assert.equal(suspended.status, 200, JSON.stringify(suspended.body));
      assert.equal((await verifyTrustBundle(bundle, anchor)).valid, true);
      assert.deepEqual(codes(await verifyTrustBundle(bundle, anchor, new Date(), ONLINE)), ['TRUST_MARK_REVOKED']);
    });
  });
}
