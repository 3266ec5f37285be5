// A registry's link to its parent through OpenID Federation alone (issue #31, "one chain, not two";
// docs/federation.md "Key rollover through OpenID Federation" and "Revocation through OpenID
// Federation"): a key rotation reaches the parent's subordinate statement through the entity
// configuration, and a revocation is learnt from the fetch endpoint's not_found confirmed by the
// signed status of the parent's trust mark. The sovereign stands behind a proxy on its public address
// (REGISTRY_PUBLIC_URL), which strips the old rollover header or switches Ward's own federation
// endpoints off, so only OIDF can carry what is tested; and which, as a hostile middlebox, forges
// refusals. Real registries on loopback, on each backend.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { BUNDLE_TYP, type SignedTrustBundle } from '../../../../src/contract/trust-bundle.ts';
import { TRUST_MARK_STATUS_MEDIA_TYPE, TRUST_MARK_STATUS_TYP } from '../../../../src/contract/oidf-trust-marks.ts';
import { verifyTrustBundle } from '../../../../src/client/trust/bundle-verifier.ts';
import { readFederationState } from '../../../../src/registry/federation/storage/federation-state-store.ts';
import { eventually } from '../../../helpers/eventually.ts';
import { rootAnchor, type RunningRegistry } from '../../../helpers/federation.ts';
import { MINUTE, movableClock, proxiedTiers, rebuildRefused, revoke, wardFederationOff } from '../../../helpers/proxied-tiers.ts';
import { BACKENDS, registerAgent, writeHeaders } from '../../../helpers/registry.ts';


async function bundleOf(registry: RunningRegistry, subject: string): Promise<SignedTrustBundle> {
  const answer = await registry.call({ method: 'GET', url: `/v1/trust/bundle?subject=${encodeURIComponent(subject)}` });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body;
}

/** The bundle without Ward's delegation statements, re-signed by its issuer: it stands by the OIDF chain alone. */
async function oidfOnly(issuer: RunningRegistry, bundle: SignedTrustBundle): Promise<SignedTrustBundle> {
  const { signed_bundle: _old, ...fields } = { ...bundle, statements: [], delegation_chain: [issuer.id] };
  return { ...fields, signed_bundle: await issuer.app.ward.signer.sign(fields, BUNDLE_TYP) };
}

const kidsOf = (statement: string) => (decodeJwt(statement).jwks as { keys: Array<{ kid: string }> }).keys.map((key) => key.kid).sort();
const json = (body: unknown) => ({ 'content-type': 'application/json', body: JSON.stringify(body) });

for (const backend of BACKENDS) {
  describe(`the link to the parent through OpenID Federation [${backend}]`, () => {
    test('a rotation reaches the parent through the entity configuration alone: the old rollover header never arrives', async (t) => {
      const { root, sovereign, org, proxy } = await proxiedTiers(t, backend);
      const agent = await registerAgent(org);
      const anchor = { jwks: (await rootAnchor(root)).jwks };
      const k1 = org.app.ward.signer.kid;
      assert.equal(decodeProtectedHeader((await bundleOf(org, agent.agent_id)).trust_chain?.[0] as string).kid, k1);
      proxy.strip = ['ward-entity-configuration'];

      const rotated = await org.call({ method: 'POST', url: '/v1/trust/keys/rotate', headers: writeHeaders(), payload: { retire_after_seconds: 3600 } });
      assert.equal(rotated.status, 201, JSON.stringify(rotated.body));
      const k2 = rotated.body.key_id as string;
      const bundle = await eventually(async () => {
        const candidate = await bundleOf(org, agent.agent_id);
        const [own, statement] = candidate.trust_chain ?? [];
        return decodeProtectedHeader(own as string).kid === k2 && kidsOf(statement as string).includes(k2) ? candidate : undefined;
      }, "a chain whose superior statement names the new key, and whose configuration it signs", 60_000, 100);
      assert.deepEqual(kidsOf((bundle.trust_chain as string[])[1] as string), [k1, k2].sort());
      assert.deepEqual((await verifyTrustBundle(await oidfOnly(org, bundle), anchor)).errors, []);
      // The parent holds the new key; the old path tried (its header was stripped on the way) but did not carry it.
      const record = (await sovereign.call({ method: 'GET', url: `/v1/registries/${encodeURIComponent(org.id)}` })).body;
      assert.deepEqual(record.jwks.keys.map((key: { kid: string }) => key.kid).sort(), [k1, k2].sort());
      assert.ok(proxy.seen.some((request) => request.url.startsWith('/v1/federation/fetch') && request.stripped), 'the Ward grant fetch presented the header');
      // The configuration served now is signed with the new key, and the root resolves the organisation.
      const configuration = await org.app.inject({ method: 'GET', url: '/.well-known/openid-federation' });
      assert.equal(decodeProtectedHeader(configuration.body).kid, k2);
      const resolved = await root.app.inject({ method: 'GET', url: `/v1/oidf/resolve?sub=${encodeURIComponent(org.baseUrl)}&trust_anchor=${encodeURIComponent(root.baseUrl)}` });
      assert.equal(resolved.statusCode, 200, resolved.body);
    });

    test('a revocation is learnt through the fetch endpoint and the signed mark status; a forged refusal proves nothing', async (t) => {
      const clock = movableClock();
      const { sovereign, org, proxy } = await proxiedTiers(t, backend, { clock, logs: true });
      await registerAgent(org);
      assert.ok(await org.app.ward.oidfTrustChain(), 'a valid chain, holding the sovereign’s delegated-registry mark');
      // Ward's own federation endpoints are off: only OpenID Federation can tell the organisation.
      // A hostile middlebox: not_found for the statement, and a "revoked" status signed by a key of its own
      // (offered in its header), then unsigned.
      const { privateKey, publicKey } = await generateKeyPair('ES256');
      let forgedStatus = 0;
      let unsigned = false;
      proxy.intercept = (request, body, response) => {
        if (wardFederationOff(request, response)) return true;
        if (request.url?.startsWith('/v1/oidf/fetch')) {
          const { body: text, ...headers } = json({ error: 'not_found', error_description: 'revoked' });
          response.writeHead(404, headers).end(text);
          return true;
        }
        if (request.url?.startsWith('/v1/oidf/trust-mark-status')) {
          forgedStatus += 1;
          const trustMark = new URLSearchParams(body).get('trust_mark');
          const claims = { iss: proxy.url, trust_mark: trustMark, status: 'revoked', iat: Math.floor(clock.now().getTime() / 1000) };
          if (unsigned) {
            const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
            response.writeHead(200, { 'content-type': TRUST_MARK_STATUS_MEDIA_TYPE }).end(`${part({ alg: 'none', typ: TRUST_MARK_STATUS_TYP })}.${part(claims)}.`);
            return true;
          }
          void exportJWK(publicKey).then(async (jwk) => {
            const jwt = await new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: TRUST_MARK_STATUS_TYP, jwk }).sign(privateKey);
            response.writeHead(200, { 'content-type': TRUST_MARK_STATUS_MEDIA_TYPE }).end(jwt);
          });
          return true;
        }
        return false;
      };
      clock.advance(6 * MINUTE); // a third of the statements' life: the chain is rebuilt, in the background (the valid one served meanwhile)
      let logged = org.warnings.length;
      assert.ok(await org.app.ward.oidfTrustChain(), 'the chain held is served while the next is built');
      await eventually(() => forgedStatus === 1 || undefined, 'the status asked');
      await rebuildRefused(org, logged, /which proves nothing/); // the rebuild judging the answer
      const kept = await org.app.ward.oidfTrustChain();
      assert.ok(kept, 'the chain held is kept');
      assert.equal(forgedStatus, 1, 'the status was asked, and its answer judged');
      assert.equal(org.app.ward.parentLink.revoked(), undefined);
      // Nor does an unsigned one.
      unsigned = true;
      clock.advance(MINUTE);
      logged = org.warnings.length;
      assert.ok(await org.app.ward.oidfTrustChain(), 'the chain held is still kept');
      await eventually(() => forgedStatus === 2 || undefined, 'the status asked again');
      await rebuildRefused(org, logged, /which proves nothing/);
      assert.ok(await org.app.ward.oidfTrustChain(), 'the chain held is still kept');
      assert.equal(forgedStatus, 2);
      assert.equal(org.app.ward.parentLink.revoked(), undefined);
      assert.equal((await readFederationState<{ revoked?: unknown }>(org.storage.db, 'delegation'))?.revoked, undefined);

      // The real revocation: the sovereign refuses the statement, and its signed status says revoked.
      proxy.intercept = (request, _body, response) => wardFederationOff(request, response);
      assert.equal((await revoke(sovereign, org)).status, 200);
      // Noticed long after: the last mark held has expired by now, and its status still says revoked.
      clock.advance(20 * MINUTE);
      // The chain held has expired too: the next ask rebuilds, learns of the revocation, and serves none.
      await org.app.ward.oidfTrustChain();
      await eventually(() => org.app.ward.parentLink.revoked(), 'the revocation confirmed');
      assert.equal(await org.app.ward.oidfTrustChain(), undefined);
      assert.deepEqual(org.app.ward.parentLink.revoked(), { reason: null });
      // Stored like a revocation the old path confirms: every instance and a restart see it.
      assert.deepEqual((await readFederationState<{ revoked?: unknown }>(org.storage.db, 'delegation'))?.revoked, { reason: null });
      const route = await org.app.inject({ method: 'POST', url: '/v1/route', payload: { target: 'registry://gb/agents/01J00000000000000000000000' } });
      assert.equal(JSON.parse(route.body).error.code, 'REGISTRY_REVOKED');
      assert.ok(!proxy.seen.some((request) => request.url.startsWith('/v1/federation/status')), 'the old path never confirmed it');
    });
  });
}
