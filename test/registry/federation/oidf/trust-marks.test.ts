// OpenID Federation trust marks (issue #31 item 4), in-process on each backend with the three tiers
// listening on loopback: an agent's marks in its trust bundle and from the trust mark endpoint, the
// sovereign's mark about the organisation in the organisation's entity configuration, each verified
// with jose against the issuer's federation keys (its entity configuration's jwks), and the status
// endpoint saying active, revoked (suspension, registry revocation), expired and invalid.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compactVerify, createLocalJWKSet, decodeJwt, type JSONWebKeySet } from 'jose';
import { agentEntityIdentifier } from '../../../../src/contract/oidf-trust-marks.ts';
import { refreshAfterRevocation, registrationBody, startRegistry, threeTiers, type RunningRegistry } from '../../../helpers/federation.ts';
import { BACKENDS, registerAgent, ulidOf, writeHeaders } from '../../../helpers/registry.ts';
import { makeCertificate } from '../../agents/evidence/fixtures.ts';

const VALIDATED = 'urn:ward:trust-mark:trust-validated';
const ATTESTED = 'urn:ward:trust-mark:attested';
const DELEGATED = 'urn:ward:trust-mark:delegated-registry';
const MINUTE = 60_000;

/** A clock the test moves forward. */
function movableClock() {
  let offset = 0;
  return { now: () => new Date(Date.now() + offset), advance: (ms: number) => (offset += ms) };
}

/** The federation keys of `registry`: the jwks of its entity configuration. */
async function federationKeys(registry: RunningRegistry): Promise<JSONWebKeySet> {
  const configuration = await registry.app.inject({ method: 'GET', url: '/.well-known/openid-federation' });
  return decodeJwt(configuration.body).jwks as JSONWebKeySet;
}

/** The claims of a mark once it verifies with jose against `issuer`'s federation keys (typ checked). */
async function verifiedMark(issuer: RunningRegistry, jwt: string): Promise<Record<string, any>> {
  const { payload, protectedHeader } = await compactVerify(jwt, createLocalJWKSet(await federationKeys(issuer)));
  assert.equal(protectedHeader.typ, 'trust-mark+jwt');
  return JSON.parse(new TextDecoder().decode(payload));
}

/** Asks `issuer`'s status endpoint about `mark`; the answer verified with jose, its status returned. */
async function statusOf(issuer: RunningRegistry, mark: string): Promise<string> {
  const answer = await issuer.app.inject({
    method: 'POST',
    url: '/v1/oidf/trust-mark-status',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ trust_mark: mark }).toString(),
  });
  assert.equal(answer.statusCode, 200, answer.body);
  assert.equal(answer.headers['content-type'], 'application/trust-mark-status-response+jwt');
  const { payload, protectedHeader } = await compactVerify(answer.body, createLocalJWKSet(await federationKeys(issuer)));
  assert.equal(protectedHeader.typ, 'trust-mark-status-response+jwt');
  const claims = JSON.parse(new TextDecoder().decode(payload));
  assert.equal(claims.iss, issuer.baseUrl);
  assert.equal(claims.trust_mark, mark);
  assert.equal(typeof claims.iat, 'number');
  return claims.status;
}

const markUrl = (type: string, sub: string) => `/v1/oidf/trust-mark?trust_mark_type=${encodeURIComponent(type)}&sub=${encodeURIComponent(sub)}`;

for (const backend of BACKENDS) {
  describe(`OpenID Federation trust marks [${backend}]`, () => {
    test('an agent’s bundle carries its trust-validated mark, which verifies with the registry’s federation keys; suspension revokes it at once and expiry shows', async (t) => {
      const clock = movableClock();
      const { org } = await threeTiers(t, backend, { clock });
      // Its certificate lapses in ten minutes: the mark may not outlive it.
      const lapses = new Date(Date.now() + 10 * MINUTE);
      const agent = await registerAgent(org, { trust: { certificates: [makeCertificate({ notBefore: new Date(Date.now() - MINUTE * 60), notAfter: lapses }).pem], signatures: [], attestations: [] } });
      assert.deepEqual([agent.trust_validation.state, agent.trust_validation.level], ['validated', 1]);
      const sub = agentEntityIdentifier(org.baseUrl, agent.agent_id);

      const bundle = await org.call({ method: 'GET', url: `/v1/trust/bundle?subject=${encodeURIComponent(agent.agent_id)}` });
      assert.equal(bundle.status, 200, JSON.stringify(bundle.body));
      // Level 1: trust-validated, not attested (that needs an attestation by a known issuer).
      assert.deepEqual(bundle.body.trust_marks.map((entry: any) => entry.trust_mark_type), [VALIDATED]);
      const mark = bundle.body.trust_marks[0].trust_mark as string;
      const claims = await verifiedMark(org, mark);
      assert.deepEqual(
        { iss: claims.iss, sub: claims.sub, type: claims.trust_mark_type, agent: claims.ward_agent_id, level: claims.ward_trust_level },
        { iss: org.baseUrl, sub, type: VALIDATED, agent: agent.agent_id, level: 1 },
      );
      assert.ok(claims.iat <= Math.floor(clock.now().getTime() / 1000) && claims.exp === Math.floor(lapses.getTime() / 1000), 'exp is the certificate’s lapse, before the 15-minute lifetime');
      assert.equal(await statusOf(org, mark), 'active');

      // The trust mark endpoint issues the same kind of mark; attested is not found for this agent.
      const issued = await org.app.inject({ method: 'GET', url: markUrl(VALIDATED, sub) });
      assert.equal(issued.statusCode, 200);
      assert.equal(issued.headers['content-type'], 'application/trust-mark+jwt');
      assert.equal((await verifiedMark(org, issued.body)).sub, sub);
      const attested = await org.call({ method: 'GET', url: markUrl(ATTESTED, sub) });
      assert.deepEqual([attested.status, attested.body.error], [404, 'not_found']);

      const suspended = await org.call({ method: 'POST', url: `/v1/agents/${ulidOf(agent.agent_id)}/suspend`, headers: writeHeaders(), payload: { reason: 'security review' } });
      assert.equal(suspended.status, 200);
      assert.equal(await statusOf(org, mark), 'revoked');
      const refused = await org.call({ method: 'GET', url: markUrl(VALIDATED, sub) });
      assert.deepEqual([refused.status, refused.body.error], [404, 'not_found']);

      const reinstated = await org.call({ method: 'POST', url: `/v1/agents/${ulidOf(agent.agent_id)}/reinstate`, headers: writeHeaders() });
      assert.equal(reinstated.status, 200);
      assert.equal(await statusOf(org, mark), 'active', 'what the mark asserts holds again: the registry re-checked it');
      clock.advance(12 * MINUTE);
      // Expired, and what it asserts no longer holds (the certificate lapsed with it): revoked is judged first.
      assert.equal(await statusOf(org, mark), 'revoked');
      // And once the certificate has lapsed no new mark is issued.
      assert.equal((await org.call({ method: 'GET', url: markUrl(VALIDATED, sub) })).status, 404);
    });

    test('the sovereign’s delegated-registry mark rides in the organisation’s entity configuration, verifies with the sovereign’s keys, and is revoked with the organisation', async (t) => {
      const clock = movableClock();
      const { root, sovereign, org } = await threeTiers(t, backend, { clock });
      const configuration = decodeJwt((await org.app.inject({ method: 'GET', url: '/.well-known/openid-federation' })).body);
      const entries = configuration.trust_marks as Array<{ trust_mark_type: string; trust_mark: string }>;
      assert.deepEqual(entries.map((entry) => entry.trust_mark_type), [DELEGATED]);
      const mark = (entries[0] as { trust_mark: string }).trust_mark;
      const claims = await verifiedMark(sovereign, mark);
      assert.deepEqual([claims.iss, claims.sub, claims.ward_registry_id], [sovereign.baseUrl, org.baseUrl, org.id]);
      await assert.rejects(verifiedMark(org, mark), 'the organisation’s own keys do not verify its superior’s mark');
      assert.equal(await statusOf(sovereign, mark), 'active');
      // Every tier publishes the status endpoint; the root has no superior and so no marks.
      assert.equal((decodeJwt((await root.app.inject({ method: 'GET', url: '/.well-known/openid-federation' })).body).metadata as any).federation_entity.federation_trust_mark_status_endpoint, `${root.baseUrl}/v1/oidf/trust-mark-status`);
      assert.equal(decodeJwt((await root.app.inject({ method: 'GET', url: '/.well-known/openid-federation' })).body).trust_marks, undefined);
      assert.deepEqual((decodeJwt((await sovereign.app.inject({ method: 'GET', url: '/.well-known/openid-federation' })).body).trust_marks as any[]).map((entry) => entry.trust_mark_type), [DELEGATED]);

      // Past its exp while the organisation stands: expired.
      clock.advance(16 * MINUTE);
      assert.equal(await statusOf(sovereign, mark), 'expired');
      const revoked = await sovereign.call({ method: 'POST', url: `/v1/registries/${encodeURIComponent(org.id)}/revoke`, headers: writeHeaders(), payload: { reason: 'contract ended' } });
      assert.equal(revoked.status, 200);
      // Expired and revoked: revoked, so the organisation can still learn of it with the last mark it held.
      assert.equal(await statusOf(sovereign, mark), 'revoked');
      const refused = await sovereign.call({ method: 'GET', url: markUrl(DELEGATED, org.baseUrl) });
      assert.deepEqual([refused.status, refused.body.error], [404, 'not_found']);
    });

    test('a registry its parent revoked issues no agent marks and says revoked of those it issued (regression)', async (t) => {
      const { sovereign, org } = await threeTiers(t, backend);
      const agent = await registerAgent(org, { trust: { certificates: [makeCertificate().pem], signatures: [], attestations: [] } });
      const sub = agentEntityIdentifier(org.baseUrl, agent.agent_id);
      const mark = (await org.app.inject({ method: 'GET', url: markUrl(VALIDATED, sub) })).body;
      assert.equal(await statusOf(org, mark), 'active');

      const revoked = await sovereign.call({ method: 'POST', url: `/v1/registries/${encodeURIComponent(org.id)}/revoke`, headers: writeHeaders(), payload: { reason: 'contract ended' } });
      assert.equal(revoked.status, 200);
      assert.equal(await refreshAfterRevocation(org), false, 'the organisation learns of its revocation');
      assert.equal(await statusOf(org, mark), 'revoked');
      const refused = await org.call({ method: 'GET', url: markUrl(VALIDATED, sub) });
      assert.deepEqual([refused.status, refused.body.error], [404, 'not_found']);
      assert.match(refused.body.error_description, /revoked by its superior/);
    });

    test('a delegated-registry mark names its registry by id: another registry enrolled later at the same address does not revive it (regression)', async (t) => {
      const { sovereign, org } = await threeTiers(t, backend);
      const old = decodeJwt((await org.app.inject({ method: 'GET', url: '/.well-known/openid-federation' })).body).trust_marks as Array<{ trust_mark: string }>;
      const mark = (old[0] as { trust_mark: string }).trust_mark;
      assert.equal(await statusOf(sovereign, mark), 'active');
      const revoked = await sovereign.call({ method: 'POST', url: `/v1/registries/${encodeURIComponent(org.id)}/revoke`, headers: writeHeaders(), payload: { reason: 'contract ended' } });
      assert.equal(revoked.status, 200);
      assert.equal(await statusOf(sovereign, mark), 'revoked');

      // A different registry (its own id and keys) is enrolled at the revoked one's api_base_url.
      const successor = await startRegistry(t, backend, { REGISTRY_TIER: 'organisational', REGISTRY_NAME: 'leeds-two', REGISTRY_JURISDICTION: 'GB' });
      const enrolled = await sovereign.call({ method: 'POST', url: '/v1/registries', headers: writeHeaders(), payload: await registrationBody(successor, 'organisational', { api_base_url: org.baseUrl }) });
      assert.equal(enrolled.status, 201, JSON.stringify(enrolled.body));
      assert.notEqual(enrolled.body.id ?? enrolled.body.registry_id, org.id);
      const fresh = await sovereign.app.inject({ method: 'GET', url: markUrl(DELEGATED, org.baseUrl) });
      assert.equal(fresh.statusCode, 200, 'the new registry at that address has its own mark');
      assert.equal((await verifiedMark(sovereign, fresh.body)).ward_registry_id, successor.id);
      assert.equal(await statusOf(sovereign, fresh.body), 'active');
      assert.equal(await statusOf(sovereign, mark), 'revoked', 'the old registry’s mark stays revoked');
    });

    test('a mark signed by the registry but without its subject’s id is invalid', async (t) => {
      const { sovereign, org } = await threeTiers(t, backend);
      const now = Math.floor(Date.now() / 1000);
      const bare = await sovereign.app.ward.signer.sign({ iss: sovereign.baseUrl, sub: org.baseUrl, trust_mark_type: DELEGATED, id: DELEGATED, iat: now, exp: now + 600 }, 'trust-mark+jwt');
      assert.equal(await statusOf(sovereign, bare), 'invalid');
      const agent = await registerAgent(org, { trust: { certificates: [makeCertificate().pem], signatures: [], attestations: [] } });
      const bareAgent = await org.app.ward.signer.sign({ iss: org.baseUrl, sub: agentEntityIdentifier(org.baseUrl, agent.agent_id), trust_mark_type: VALIDATED, id: VALIDATED, iat: now, exp: now + 600, ward_trust_level: 1 }, 'trust-mark+jwt');
      assert.equal(await statusOf(org, bareAgent), 'invalid');
      const otherAgent = await org.app.ward.signer.sign({ iss: org.baseUrl, sub: agentEntityIdentifier(org.baseUrl, agent.agent_id), trust_mark_type: VALIDATED, id: VALIDATED, iat: now, exp: now + 600, ward_agent_id: 'urn:ward:agent:someone-else', ward_trust_level: 1 }, 'trust-mark+jwt');
      assert.equal(await statusOf(org, otherAgent), 'revoked', 'about another agent than the one now at that address');
    });

    test('a mark the registry did not sign, or altered, is invalid; a malformed status request is refused in OIDF’s format', async (t) => {
      const { sovereign, org } = await threeTiers(t, backend);
      const agent = await registerAgent(org, { trust: { certificates: [makeCertificate().pem], signatures: [], attestations: [] } });
      const mark = (await org.app.inject({ method: 'GET', url: markUrl(VALIDATED, agentEntityIdentifier(org.baseUrl, agent.agent_id)) })).body;
      assert.equal(await statusOf(org, mark), 'active');
      assert.equal(await statusOf(sovereign, mark), 'invalid', 'the sovereign did not issue it');
      const [header, payload, signature] = mark.split('.') as [string, string, string];
      const raised = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), ward_trust_level: 3 })).toString('base64url');
      assert.equal(await statusOf(org, `${header}.${raised}.${signature}`), 'invalid');
      assert.equal(await statusOf(org, 'not-a-jwt'), 'invalid');

      for (const [payloadText, contentType] of [
        ['', 'application/x-www-form-urlencoded'],
        ['trust_mark=a.b.c&trust_mark=d.e.f', 'application/x-www-form-urlencoded'],
        [JSON.stringify({ trust_mark: mark }), 'application/json'],
      ] as const) {
        const answer = await org.app.inject({ method: 'POST', url: '/v1/oidf/trust-mark-status', headers: { 'content-type': contentType }, payload: payloadText });
        assert.equal(answer.statusCode, 400, payloadText);
        assert.equal(JSON.parse(answer.body).error, 'invalid_request');
      }
      for (const url of [markUrl('urn:ward:trust-mark:unknown', org.baseUrl), markUrl(VALIDATED, `${org.baseUrl}/v1/agents/nobody`), markUrl(DELEGATED, org.baseUrl)]) {
        const answer = await org.call({ method: 'GET', url });
        assert.deepEqual([answer.status, answer.body.error], [404, 'not_found'], url);
      }
      assert.equal((await org.call({ method: 'GET', url: `/v1/oidf/trust-mark?sub=${encodeURIComponent(org.baseUrl)}` })).body.error, 'invalid_request');

      // Regression: a mark's iat or exp decoded from its base64 read as an NHS number about one time in
      // eleven, and the PHI guard refused the status request. A compact JWS in trust_mark is a signed
      // token (verified, never stored), not scanned; the same digits as plain text still are.
      const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
      const nhsShaped = `${b64({ alg: 'ES256', typ: 'trust-mark+jwt', kid: 'k' })}.${b64({ iss: org.baseUrl, iat: 9434765919, exp: 9434765919 })}.${b64('sig')}`;
      assert.equal(await statusOf(org, nhsShaped), 'invalid');
      const plain = await org.app.inject({ method: 'POST', url: '/v1/oidf/trust-mark-status', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'trust_mark=943%20476%205919' });
      assert.equal(plain.statusCode, 400, 'invalid_request is 400 (OIDF §8.9), whatever refused it');
      assert.deepEqual(JSON.parse(plain.body), { error: 'invalid_request', error_description: 'The request appears to carry protected health information; it was not processed. (PHI_DETECTED)' });
    });
  });
}
