// What counts as a trust mark status answer (issue #31, docs/federation.md "One chain"), for the trust
// bundle verifier online and for the registry's resolver, which share askTrustMarkStatus. Regression: an
// `active` answer of any age was accepted, so anyone between a verifier and the issuer could replay one
// captured before a suspension or revocation until the mark expired. Real registries on loopback, each
// backend; the "attacker" is a loopback proxy in front of the issuer that relays, or answers a status
// request itself with a captured (or re-signed) answer. The bundles and configurations that name it are
// signed with the registries' own keys, as a bundle of another content would be.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import { MAX_MARKS_ASKED } from '../../../../src/client/trust/bundle-trust-marks.ts';
import { TRUST_MARKS_STEP, TRUST_MARK_STATUS_STEP, verifyTrustBundle, type BundleVerification } from '../../../../src/client/trust/bundle-verifier.ts';
import { validateTrustChain } from '../../../../src/client/oidf/trust-chain-validation.ts';
import { TRUST_MARK_STATUS_MEDIA_TYPE, TRUST_MARK_STATUS_TYP, TRUST_MARK_TYP } from '../../../../src/contract/oidf-trust-marks.ts';
import { ENTITY_STATEMENT_TYP } from '../../../../src/contract/openid-federation.ts';
import { BUNDLE_TYP, type SignedTrustBundle } from '../../../../src/contract/trust-bundle.ts';
import { validTrustMarks } from '../../../../src/registry/federation/oidf/resolve-trust-marks.ts';
import { oidfDeps } from '../../../../src/registry/federation/oidf/oidf-routes.ts';
import { threeTiers, type RunningRegistry } from '../../../helpers/federation.ts';
import { startFrontProxy, type FrontProxy } from '../../../helpers/front-proxy.ts';
import { BACKENDS, registerAgent, ulidOf, writeHeaders } from '../../../helpers/registry.ts';
import { makeCertificate } from '../../agents/evidence/fixtures.ts';

const VALIDATED = 'urn:ward:trust-mark:trust-validated';
const STATUS_PATH = '/v1/oidf/trust-mark-status';
const MINUTE = 60_000;

const codes = (result: BundleVerification) => result.errors.map((error) => error.code);
const stepOf = (result: BundleVerification, name: string) => result.steps.find((step) => step.name === name);
const statusRequests = (proxy: FrontProxy) => proxy.seen.filter((request) => request.url.startsWith(STATUS_PATH)).length;

/** `issuer`'s signed status answer about `trustMark`, as anyone on the way could capture it. */
async function capturedAnswer(issuer: RunningRegistry, trustMark: string): Promise<string> {
  const response = await fetch(`${issuer.baseUrl}${STATUS_PATH}`, { method: 'POST', body: new URLSearchParams({ trust_mark: trustMark }) });
  assert.equal(response.status, 200);
  return response.text();
}

/** `answer` as its issuer signed it `agoMs` earlier (what a capture that old would be). */
async function olderBy(issuer: RunningRegistry, answer: string, agoMs: number): Promise<string> {
  const claims = decodeJwt(answer);
  return issuer.app.ward.signer.sign({ ...claims, iat: (claims.iat as number) - agoMs / 1000 }, TRUST_MARK_STATUS_TYP);
}

/** The proxy answers every status request with `answer` from now on (undefined: relays to the issuer again). */
function replay(proxy: FrontProxy, answer: string | undefined) {
  proxy.intercept =
    answer === undefined
      ? undefined
      : (request, _body, response) => {
          if (!request.url?.startsWith(STATUS_PATH)) return false;
          response.writeHead(200, { 'content-type': TRUST_MARK_STATUS_MEDIA_TYPE }).end(answer);
          return true;
        };
}

async function bundleOf(registry: RunningRegistry, subject: string): Promise<SignedTrustBundle> {
  const answer = await registry.call({ method: 'GET', url: `/v1/trust/bundle?subject=${encodeURIComponent(subject)}` });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body;
}

const certified = { trust: { certificates: [makeCertificate().pem], signatures: [], attestations: [] } };

/**
 * Three tiers, an organisation agent with the trust-validated mark, and `bundle(marks?)`: its bundle in the
 * OIDF-only form whose issuer configuration (ES[0]) names the proxy in front of the organisation as its
 * status endpoint, re-signed by the organisation, optionally listing other marks.
 */
async function behindProxy(t: Parameters<typeof threeTiers>[0], backend: (typeof BACKENDS)[number]) {
  const tiers = await threeTiers(t, backend);
  const { org, root } = tiers;
  const proxy = await startFrontProxy(t);
  proxy.target = org.baseUrl;
  const agent = await registerAgent(org, certified);
  const full = await bundleOf(org, agent.agent_id);
  const chain = [...(full.trust_chain ?? [])];
  const configuration = structuredClone(decodeJwt(chain[0] as string)) as Record<string, any>;
  configuration.metadata.federation_entity.federation_trust_mark_status_endpoint = `${proxy.url}${STATUS_PATH}`;
  chain[0] = await org.app.ward.signer.sign(configuration, ENTITY_STATEMENT_TYP);
  const [mark] = full.trust_marks ?? [];
  assert.equal(mark?.trust_mark_type, VALIDATED);
  const bundle = async (marks = full.trust_marks) => {
    const { signed_bundle: _old, ...fields } = { ...full, statements: [], delegation_chain: [org.id], trust_chain: chain, trust_marks: marks };
    return { ...fields, signed_bundle: await org.app.ward.signer.sign(fields, BUNDLE_TYP) } as SignedTrustBundle;
  };
  const anchor = { jwks: (await root.call({ method: 'GET', url: '/.well-known/jwks.json' })).body };
  const suspend = async (agentId: string) => {
    const suspended = await org.call({ method: 'POST', url: `/v1/agents/${ulidOf(agentId)}/suspend`, headers: writeHeaders(), payload: { reason: 'security review' } });
    assert.equal(suspended.status, 200, JSON.stringify(suspended.body));
  };
  return { ...tiers, proxy, agent, mark: mark as { trust_mark_type: string; trust_mark: string }, bundle, anchor, suspend };
}

for (const backend of BACKENDS) {
  describe(`trust mark status answers: fresh, about the mark asked, bounded in number [${backend}]`, () => {
    test('a stale `active` answer for a suspended agent’s mark is refused: STATUS_UNAVAILABLE, not valid', async (t) => {
      const { org, proxy, agent, mark, bundle, anchor, suspend } = await behindProxy(t, backend);
      const relayed = await verifyTrustBundle(await bundle(), anchor, new Date(), { online: {} });
      assert.deepEqual([relayed.valid, stepOf(relayed, TRUST_MARK_STATUS_STEP)?.detail, statusRequests(proxy)], [true, `${VALIDATED}: active`, 1]);
      const active = await capturedAnswer(org, mark.trust_mark);
      assert.equal(decodeJwt(active).status, 'active');

      await suspend(agent.agent_id);
      assert.deepEqual(codes(await verifyTrustBundle(await bundle(), anchor, new Date(), { online: {} })), ['TRUST_MARK_REVOKED'], 'relayed, the issuer’s word');
      // Within five minutes a replay still passes: the rule bounds how long an answer is good for, and this proves the replay reaches the verifier.
      replay(proxy, active);
      assert.deepEqual(codes(await verifyTrustBundle(await bundle(), anchor, new Date(), { online: {} })), []);
      for (const [why, answer] of [
        ['captured six minutes ago', await olderBy(org, active, 6 * MINUTE)],
        ['captured a year ago', await olderBy(org, active, 365 * 24 * 60 * MINUTE)],
        ['dated two minutes ahead', await olderBy(org, active, -2 * MINUTE)],
        ['without iat', await org.app.ward.signer.sign({ ...decodeJwt(active), iat: undefined }, TRUST_MARK_STATUS_TYP)],
      ] as const) {
        replay(proxy, answer);
        const result = await verifyTrustBundle(await bundle(), anchor, new Date(), { online: {} });
        assert.deepEqual([result.valid, codes(result)], [false, ['STATUS_UNAVAILABLE']], why);
        assert.match(result.errors[0]?.message ?? '', /trust mark 1 \(urn:ward:trust-mark:trust-validated\): the status answer of .* is not fresh/, why);
        assert.equal(stepOf(result, TRUST_MARK_STATUS_STEP)?.status, 'failed', why);
      }
    });

    test('an answer about another trust mark than the one asked is refused, though its issuer signed it just now', async (t) => {
      const { org, proxy, agent, bundle, anchor, suspend } = await behindProxy(t, backend);
      const other = await registerAgent(org, certified);
      const [otherMark] = (await bundleOf(org, other.agent_id)).trust_marks ?? [];
      const aboutOther = await capturedAnswer(org, otherMark?.trust_mark as string);
      assert.equal(decodeJwt(aboutOther).status, 'active');
      await suspend(agent.agent_id);
      replay(proxy, aboutOther);
      const result = await verifyTrustBundle(await bundle(), anchor, new Date(), { online: {} });
      assert.deepEqual([result.valid, codes(result)], [false, ['STATUS_UNAVAILABLE']]);
      assert.match(result.errors[0]?.message ?? '', new RegExp(`is not ${org.baseUrl}'s about this mark`));
    });

    test(`online, only a bundle's first ${MAX_MARKS_ASKED} marks are asked about; the others are STATUS_UNAVAILABLE`, async (t) => {
      const { proxy, mark, bundle, anchor } = await behindProxy(t, backend);
      const many = await bundle(Array.from({ length: MAX_MARKS_ASKED + 2 }, () => mark));
      assert.deepEqual(codes(await verifyTrustBundle(many, anchor)), [], 'offline every copy is a genuine mark');
      const result = await verifyTrustBundle(many, anchor, new Date(), { online: {} });
      assert.deepEqual(codes(result), ['STATUS_UNAVAILABLE', 'STATUS_UNAVAILABLE']);
      assert.deepEqual(
        result.errors.map((error) => error.message),
        [MAX_MARKS_ASKED + 1, MAX_MARKS_ASKED + 2].map((n) => `trust mark ${n} (${VALIDATED}): not asked: a bundle's first ${MAX_MARKS_ASKED} marks are, no more`),
      );
      assert.equal(statusRequests(proxy), MAX_MARKS_ASKED);
      // Exactly the limit: all asked, valid.
      assert.deepEqual(codes(await verifyTrustBundle(await bundle(Array.from({ length: MAX_MARKS_ASKED }, () => mark)), anchor, new Date(), { online: {} })), []);
    });

    test('an expired mark is not asked about online; the standing one beside it is', async (t) => {
      const { org, proxy, mark, bundle, anchor } = await behindProxy(t, backend);
      const now = Math.floor(Date.now() / 1000);
      const expired = { trust_mark_type: VALIDATED, trust_mark: await org.app.ward.signer.sign({ ...decodeJwt(mark.trust_mark), iat: now - 7200, exp: now - 3600 }, TRUST_MARK_TYP) };
      const alone = await verifyTrustBundle(await bundle([expired]), anchor, new Date(), { online: {} });
      assert.deepEqual([alone.valid, codes(alone), statusRequests(proxy)], [true, [], 0]);
      assert.match(stepOf(alone, TRUST_MARKS_STEP)?.detail ?? '', /; 1 expired/);
      assert.equal(stepOf(alone, TRUST_MARK_STATUS_STEP)?.detail, 'no mark to ask about');
      const beside = await verifyTrustBundle(await bundle([expired, mark]), anchor, new Date(), { online: {} });
      assert.deepEqual([codes(beside), stepOf(beside, TRUST_MARK_STATUS_STEP)?.detail, statusRequests(proxy)], [[], `${VALIDATED}: active`, 1]);
    });

    test('the resolver drops a mark whose status answer is stale or about another mark', async (t) => {
      const { root, sovereign, org } = await threeTiers(t, backend);
      const proxy = await startFrontProxy(t);
      proxy.target = sovereign.baseUrl;
      const resolved = await root.app.inject({ method: 'GET', url: `/v1/oidf/resolve?sub=${encodeURIComponent(org.baseUrl)}&trust_anchor=${encodeURIComponent(root.baseUrl)}` });
      assert.equal(resolved.statusCode, 200, resolved.body);
      const rootKeys = (await root.call({ method: 'GET', url: '/.well-known/jwks.json' })).body.keys;
      const valid = await validateTrustChain(decodeJwt(resolved.body).trust_chain as string[], root.baseUrl, rootKeys, new Date());
      const [good] = (decodeJwt(resolved.body).trust_marks ?? []) as Array<{ trust_mark_type: string; trust_mark: string }>;
      const deps = oidfDeps(root.app.ward);
      const knowledge = { statements: valid.statements, anchorKeys: rootKeys, statusEndpoints: new Map([[sovereign.baseUrl, `${proxy.url}${STATUS_PATH}`]]) };
      const kept = async (now = new Date()) => (await validTrustMarks(deps, knowledge, now)).map((entry) => entry.trust_mark);
      assert.deepEqual(await kept(), [good?.trust_mark], 'relayed: active');

      // Captured while the organisation stood: an answer about its mark, and one about another mark the sovereign issued it.
      const active = await capturedAnswer(sovereign, good?.trust_mark as string);
      const claims = decodeJwt(good?.trust_mark as string);
      const otherMark = await sovereign.app.ward.signer.sign({ ...claims, iat: (claims.iat as number) - 1 }, TRUST_MARK_TYP);
      const aboutOther = await capturedAnswer(sovereign, otherMark);
      assert.deepEqual([decodeJwt(active).status, decodeJwt(aboutOther).status], ['active', 'active']);
      const revoked = await sovereign.call({ method: 'POST', url: `/v1/registries/${encodeURIComponent(org.id)}/revoke`, headers: writeHeaders(), payload: { reason: 'contract ended' } });
      assert.equal(revoked.status, 200);
      assert.deepEqual(await kept(), [], 'relayed: revoked');

      replay(proxy, active);
      assert.deepEqual(await kept(), [good?.trust_mark], 'a replay within five minutes still reaches the resolver');
      // The same captured answer, judged six minutes on (the resolver's clock), and one signed six minutes before.
      assert.deepEqual(await kept(new Date(Date.now() + 6 * MINUTE)), [], 'replayed six minutes after its capture');
      replay(proxy, await olderBy(sovereign, active, 6 * MINUTE));
      assert.deepEqual(await kept(), [], 'stale');
      replay(proxy, aboutOther);
      assert.deepEqual(await kept(), [], 'about another mark');
    });
  });
}
