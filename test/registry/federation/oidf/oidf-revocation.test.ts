// A child's revocation through OpenID Federation, against what a middlebox or the federation's own
// shape could make of it (docs/federation.md "Revocation through OpenID Federation"; docs/decisions.md
// 92, 97): the superior's mark is kept only once it verifies and names this registry; a superior
// refused by its own superior revokes nobody below it; a forged configuration's keys and a stale status
// confirm nothing; and what a child learnt from its superior is stored, so another instance (one started
// after the revocation, or one behind the same load balancer) confirms and signs with it. The sovereign
// stands behind a proxy on its public address; Ward's own federation endpoints are off there, so only
// OIDF can carry what is tested. Real registries on loopback, on each backend.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { describe, test } from 'node:test';
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { TRUST_MARK_STATUS_MEDIA_TYPE, TRUST_MARK_STATUS_TYP, TRUST_MARK_TYP } from '../../../../src/contract/oidf-trust-marks.ts';
import { ENTITY_STATEMENT_TYP } from '../../../../src/contract/openid-federation.ts';
import { buildRegistry } from '../../../../src/registry/app.ts';
import { readFederationState } from '../../../../src/registry/federation/storage/federation-state-store.ts';
import { eventually } from '../../../helpers/eventually.ts';
import type { RegistryServices } from '../../../../src/registry/plugins/registry-services.ts';
import type { RunningRegistry } from '../../../helpers/federation.ts';
import { answerError, MINUTE, movableClock, proxiedTiers, rebuildRefused, revoke, wardFederationOff } from '../../../helpers/proxied-tiers.ts';
import { BACKENDS, writeHeaders } from '../../../helpers/registry.ts';

const DELEGATED = 'urn:ward:trust-mark:delegated-registry';

const storedRevocation = async (registry: RunningRegistry) => (await readFederationState<{ revoked?: unknown }>(registry.storage.db, 'delegation'))?.revoked;
const seconds = (at: Date) => Math.floor(at.getTime() / 1000);

/** Another instance of `registry` on its database, at its address (behind the same load balancer). */
async function twinOf(t: { after(fn: () => unknown): void }, registry: RunningRegistry, clock: { now(): Date }) {
  const twin = await buildRegistry({ config: { ...registry.app.ward.config, REGISTRY_PUBLIC_URL: registry.baseUrl }, storage: registry.storage, clock, logger: false });
  t.after(() => twin.close());
  return twin;
}

/** Answers a status request with a fresh `revoked` about the mark asked, signed by `sign` (a middlebox's own key). */
function answerRevoked(response: ServerResponse, body: string, sign: (claims: Record<string, unknown>, typ: string) => Promise<string>, iss: string, now: Date): true {
  const trustMark = new URLSearchParams(body).get('trust_mark');
  void sign({ iss, trust_mark: trustMark, status: 'revoked', iat: seconds(now) }, TRUST_MARK_STATUS_TYP).then((jwt) =>
    response.writeHead(200, { 'content-type': TRUST_MARK_STATUS_MEDIA_TYPE }).end(jwt),
  );
  return true;
}

/**
 * Asks for the chain until the revocation is confirmed (a rebuild runs in the background while a valid
 * chain is held), then finds none served.
 */
async function confirmedRevoked(ward: RegistryServices): Promise<void> {
  const revoked = await eventually(async () => (await ward.oidfTrustChain(), ward.parentLink.revoked()), 'the revocation to be confirmed');
  assert.ok(revoked);
  assert.equal(await ward.oidfTrustChain(), undefined);
}

for (const backend of BACKENDS) {
  describe(`a revocation through OpenID Federation, and what may not pass for one [${backend}]`, () => {
    test('a genuine mark about the registry that stood at this address before is not kept: its revoked status revokes nobody', async (t) => {
      const clock = movableClock();
      const { sovereign, org, proxy } = await proxiedTiers(t, backend, { clock, logs: true });
      assert.ok(await org.app.ward.oidfTrustChain(), 'a valid chain, holding the sovereign’s mark');
      // A real, unexpired mark the sovereign signed about a previous registry at the organisation's address.
      const iat = seconds(clock.now());
      const previous = await sovereign.app.ward.signer.sign(
        { iss: proxy.url, sub: org.baseUrl, trust_mark_type: DELEGATED, id: DELEGATED, iat, exp: iat + 900, ward_registry_id: 'registry://gb/previous-leeds' },
        TRUST_MARK_TYP,
      );
      proxy.intercept = (request, _body, response) => {
        if (wardFederationOff(request, response)) return true;
        if (request.url?.startsWith('/v1/oidf/trust-mark?')) {
          response.writeHead(200, { 'content-type': 'application/trust-mark+jwt' }).end(previous);
          return true;
        }
        return false;
      };
      clock.advance(6 * MINUTE); // the mark held is due again: the swapped one arrives
      const configuration = decodeJwt((await org.app.inject({ method: 'GET', url: '/.well-known/openid-federation' })).body);
      const status = await sovereign.app.inject({
        method: 'POST',
        url: '/v1/oidf/trust-mark-status',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ trust_mark: previous }).toString(),
      });
      assert.equal(decodeJwt(status.body).status, 'revoked', 'the sovereign genuinely says the old mark is revoked');
      // Now a forged refusal; the status endpoint is the real one, which rightly says the old mark is revoked.
      const logged = org.warnings.length;
      let asked = 0;
      proxy.intercept = (request, _body, response) => {
        if (wardFederationOff(request, response)) return true;
        if (request.url?.startsWith('/v1/oidf/trust-mark-status')) asked += 1;
        if (request.url?.startsWith('/v1/oidf/fetch')) return answerError(response, 404, 'not_found');
        return false;
      };
      assert.ok(await org.app.ward.oidfTrustChain(), 'the chain held is kept (the rebuild runs in the background)');
      await eventually(() => (asked === 1 ? true : undefined), 'the status of the mark kept (the organisation’s own) to be asked');
      await rebuildRefused(org, logged, /which proves nothing: the mark's status is active/); // its answer judged
      assert.equal(asked, 1);
      assert.ok(await org.app.ward.oidfTrustChain(), 'the chain held is kept');
      assert.equal(org.app.ward.parentLink.revoked(), undefined);
      assert.equal(await storedRevocation(org), undefined);
      assert.ok(!JSON.stringify(configuration.trust_marks ?? []).includes(previous), 'its configuration does not carry a mark about another registry either');
    });

    test('another instance learns of a revocation confirmed through OpenID Federation when asked whether it is revoked, without serving a chain', async (t) => {
      const clock = movableClock();
      const { sovereign, org, proxy } = await proxiedTiers(t, backend, { clock, logs: true });
      const twin = await twinOf(t, org, clock);
      assert.ok(await org.app.ward.oidfTrustChain());
      proxy.intercept = (request, _body, response) => wardFederationOff(request, response);
      assert.equal((await revoke(sovereign, org)).status, 200);
      clock.advance(6 * MINUTE);
      await confirmedRevoked(org.app.ward);
      assert.deepEqual(org.app.ward.parentLink.revoked(), { reason: null }, 'through OpenID Federation: the status carries no reason');
      await eventually(() => twin.ward.parentLink.revoked(), 'the twin to learn of the revocation', 20_000, 250);
      assert.deepEqual(twin.ward.parentLink.revoked(), { reason: null });
    });

    test('a sovereign revoked by the root revokes none of its children; an organisation revoked by the sovereign is', async (t) => {
      const clock = movableClock();
      const { root, sovereign, org, proxy } = await proxiedTiers(t, backend, { clock, logs: true });
      assert.ok(await org.app.ward.oidfTrustChain());
      assert.ok(await sovereign.app.ward.oidfTrustChain());
      proxy.intercept = (request, _body, response) => wardFederationOff(request, response);
      assert.equal((await revoke(root, sovereign)).status, 200);
      clock.advance(6 * MINUTE);
      await confirmedRevoked(sovereign.app.ward);
      // It now answers not_found about the organisation, and revoked for every mark it issued.
      const statusAsked = () => proxy.seen.filter((request) => request.url.startsWith('/v1/oidf/trust-mark-status')).length;
      const before = statusAsked();
      const fetches = () => proxy.seen.filter((request) => request.url.startsWith('/v1/oidf/fetch')).length;
      const fetchesBefore = fetches();
      const logged = org.warnings.length;
      assert.ok(await org.app.ward.oidfTrustChain(), 'the chain held is kept until it expires');
      await eventually(() => (fetches() > fetchesBefore ? true : undefined), 'the rebuild to ask the sovereign');
      await rebuildRefused(org, logged, /refuses \S+ itself: no revocation of this registry/); // the rebuild judging the refusal
      assert.ok(await org.app.ward.oidfTrustChain(), 'the chain held is still kept');
      assert.equal(org.app.ward.parentLink.revoked(), undefined, 'the organisation is not revoked: its superior is');
      assert.equal(await storedRevocation(org), undefined);
      assert.equal(statusAsked(), before, 'nothing to confirm: the sovereign itself no longer stands');
      // Once the chain held expires, bundles carry none (as when a superior fails); still no revocation.
      clock.advance(16 * MINUTE);
      assert.equal(await org.app.ward.oidfTrustChain(), undefined);
      assert.equal(org.app.ward.parentLink.revoked(), undefined);
    });

    test('the organisation revoked by its standing sovereign is revoked (three tiers)', async (t) => {
      const clock = movableClock();
      const { sovereign, org, proxy } = await proxiedTiers(t, backend, { clock, logs: true });
      assert.ok(await org.app.ward.oidfTrustChain());
      proxy.intercept = (request, _body, response) => wardFederationOff(request, response);
      assert.equal((await revoke(sovereign, org)).status, 200);
      clock.advance(6 * MINUTE);
      await confirmedRevoked(org.app.ward);
      assert.deepEqual(org.app.ward.parentLink.revoked(), { reason: null }, 'through OpenID Federation: the status carries no reason');
    });

    test('a forged sovereign configuration with keys of its own is not the pinned anchor, and a stale genuine status confirms nothing', async (t) => {
      const clock = movableClock();
      const { sovereign, org, proxy } = await proxiedTiers(t, backend, { clock, logs: true });
      assert.ok(await org.app.ward.oidfTrustChain());
      const real = decodeJwt((await sovereign.app.inject({ method: 'GET', url: '/.well-known/openid-federation' })).body);
      // The middlebox: the sovereign's configuration with its own jwks, at the top (no authority_hints),
      // naming a status endpoint of its own; a refusal; and "revoked" signed by its key, kid only, fresh.
      const { privateKey, publicKey } = await generateKeyPair('ES256');
      const jwk = { ...(await exportJWK(publicKey)), kid: 'middlebox', alg: 'ES256', use: 'sig' };
      const sign = (claims: Record<string, unknown>, typ: string) => new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ, kid: 'middlebox' }).sign(privateKey);
      let forgedStatus = 0;
      let forgedServed = 0;
      proxy.intercept = (request, body, response) => {
        if (wardFederationOff(request, response)) return true;
        if (request.url?.startsWith('/v1/oidf/fetch')) return answerError(response, 404, 'not_found');
        if (request.url === '/.well-known/openid-federation') {
          forgedServed += 1;
          const { authority_hints: _hints, ...claims } = real;
          const metadata = real.metadata as { federation_entity: Record<string, unknown> };
          const forged = {
            ...claims,
            iat: seconds(clock.now()),
            exp: seconds(clock.now()) + 3600,
            jwks: { keys: [jwk] },
            metadata: { ...metadata, federation_entity: { ...metadata.federation_entity, federation_trust_mark_status_endpoint: `${proxy.url}/forged/status` } },
          };
          void sign(forged, ENTITY_STATEMENT_TYP).then((jwt) => response.writeHead(200, { 'content-type': 'application/entity-statement+jwt' }).end(jwt));
          return true;
        }
        if (request.url?.startsWith('/v1/oidf/trust-mark-status') || request.url?.startsWith('/forged/status')) {
          forgedStatus += 1;
          return answerRevoked(response, body, sign, proxy.url, clock.now());
        }
        return false;
      };
      clock.advance(6 * MINUTE);
      let logged = org.warnings.length;
      assert.ok(await org.app.ward.oidfTrustChain(), 'the chain held is kept');
      await eventually(() => (forgedServed > 0 ? true : undefined), 'the forged configuration to be read');
      await rebuildRefused(org, logged, /refused this registry's statement \(not_found\), but the chain's top \S+ \(read at \S+\) is not the pinned trust anchor/); // the refusal judged
      // The forged top is not the pinned trust anchor (the root): the refusal proves nothing, no status is asked (decision 101).
      assert.equal(forgedStatus, 0, 'a refusal under another top than the pinned anchor asks no status');
      assert.equal(decodeProtectedHeader(await sign({}, TRUST_MARK_STATUS_TYP)).jwk, undefined, 'the forged status offers no key: the header check passes');
      assert.equal(org.app.ward.parentLink.revoked(), undefined);

      // A genuine "revoked", signed by the sovereign, but six minutes old: it confirms nothing now.
      let iatOffset = -6 * MINUTE;
      let staleAsked = 0;
      proxy.intercept = (request, body, response) => {
        if (wardFederationOff(request, response)) return true;
        if (request.url?.startsWith('/v1/oidf/fetch')) return answerError(response, 404, 'not_found');
        if (request.url?.startsWith('/v1/oidf/trust-mark-status')) {
          staleAsked += 1;
          const claims = { iss: proxy.url, trust_mark: new URLSearchParams(body).get('trust_mark'), status: 'revoked', iat: seconds(new Date(clock.now().getTime() + iatOffset)) };
          void sovereign.app.ward.signer.sign(claims, TRUST_MARK_STATUS_TYP).then((jwt) => response.writeHead(200, { 'content-type': TRUST_MARK_STATUS_MEDIA_TYPE }).end(jwt));
          return true;
        }
        return false;
      };
      clock.advance(MINUTE);
      logged = org.warnings.length;
      assert.ok(await org.app.ward.oidfTrustChain());
      await eventually(() => (staleAsked > 0 ? true : undefined), 'the stale status to be asked');
      await rebuildRefused(org, logged, /which proves nothing: the status answer is not fresh/); // its answer judged
      assert.equal(org.app.ward.parentLink.revoked(), undefined, 'a status older than five minutes does not revoke');
      assert.equal(await storedRevocation(org), undefined);
      // The same answer, fresh, does: the test tells the two apart.
      iatOffset = 0;
      clock.advance(11_000);
      await confirmedRevoked(org.app.ward);
      assert.deepEqual(org.app.ward.parentLink.revoked(), { reason: null }, 'through OpenID Federation: the status carries no reason');
    });

    test('what the organisation learnt is stored: an instance started after its revocation confirms it, and the other learns it', async (t) => {
      const clock = movableClock();
      const { sovereign, org, proxy } = await proxiedTiers(t, backend, { clock, logs: true });
      assert.ok(await org.app.ward.oidfTrustChain(), 'the first instance validated a chain, and stored what it learnt');
      proxy.intercept = (request, _body, response) => wardFederationOff(request, response);
      assert.equal((await revoke(sovereign, org)).status, 200);
      clock.advance(20 * MINUTE); // long after: the mark held has expired
      // A second instance, started now: it never validated a chain itself.
      const twin = await twinOf(t, org, clock);
      assert.equal(await twin.ward.oidfTrustChain(), undefined);
      assert.deepEqual(twin.ward.parentLink.revoked(), { reason: null }, 'the twin confirmed the revocation with the stored keys and mark');
      assert.deepEqual(await storedRevocation(org), { reason: null });
      // The first instance learns it from the stored state, without building a chain.
      await eventually(() => org.app.ward.parentLink.revoked(), 'the first instance to learn of the revocation', 20_000, 250);
      const route = await org.app.inject({ method: 'POST', url: '/v1/route', payload: { target: 'registry://gb/agents/01J00000000000000000000000' } });
      assert.equal(JSON.parse(route.body).error.code, 'REGISTRY_REVOKED');
    });

    test('an instance that has built no chain signs its configuration with a key the superior names (a rollover under way)', async (t) => {
      const clock = movableClock();
      const { org, proxy } = await proxiedTiers(t, backend, { clock, logs: true });
      assert.ok(await org.app.ward.oidfTrustChain());
      const k1 = org.app.ward.signer.kid;
      // The sovereign cannot learn the new key yet: its fetch endpoint is unreachable, the old header stripped.
      proxy.strip = ['ward-entity-configuration'];
      proxy.intercept = (request, _body, response) => {
        if (wardFederationOff(request, response)) return true;
        return request.url?.startsWith('/v1/oidf/fetch') ? answerError(response, 503, 'temporarily_unavailable') : false;
      };
      const rotated = await org.call({ method: 'POST', url: '/v1/trust/keys/rotate', headers: writeHeaders(), payload: { retire_after_seconds: 3600 } });
      assert.equal(rotated.status, 201, JSON.stringify(rotated.body));
      const k2 = rotated.body.key_id as string;
      const twin = await twinOf(t, org, clock);
      assert.equal(twin.ward.signer.kid, k2, 'the twin signs with the new key by default');
      const configuration = await twin.inject({ method: 'GET', url: '/.well-known/openid-federation' });
      assert.equal(decodeProtectedHeader(configuration.body).kid, k1, 'the twin signs its configuration with the key the sovereign names');
      // Once the sovereign can read it, the rollover completes and the twin learns it from the stored view.
      proxy.intercept = (request, _body, response) => wardFederationOff(request, response);
      await eventually(async () => {
        await org.app.ward.oidfTrustChain();
        const served = await twin.inject({ method: 'GET', url: '/.well-known/openid-federation' });
        return decodeProtectedHeader(served.body).kid === k2 ? true : undefined;
      }, 'the twin to sign with the new key once the sovereign names it', 30_000, 250);
    });
    test('a middlebox standing in as the top with a statement of its own is refused by the pin: nothing learnt, then its refusal and "revoked" confirm nothing', async (t) => {
      const clock = movableClock();
      const { root, sovereign, org, proxy } = await proxiedTiers(t, backend, { clock, logs: true });
      const held = await org.app.ward.oidfTrustChain();
      assert.ok(held);
      type Stored = { superior?: { keys: { kid?: string }[] }; anchor?: { entityId: string; keys: { kid?: string }[] } };
      const before = await readFederationState<Stored>(org.storage.db, 'superior');
      assert.equal(before?.anchor?.entityId, root.baseUrl, 'the first chain pinned the root');
      const real = decodeJwt((await sovereign.app.inject({ method: 'GET', url: '/.well-known/openid-federation' })).body);
      const orgConfiguration = decodeJwt((await org.app.inject({ method: 'GET', url: '/.well-known/openid-federation' })).body);
      const { privateKey, publicKey } = await generateKeyPair('ES256');
      const jwk = { ...(await exportJWK(publicKey)), kid: 'middlebox', alg: 'ES256', use: 'sig' };
      const sign = (claims: Record<string, unknown>, typ: string) => new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ, kid: 'middlebox' }).sign(privateKey);
      const entityStatement = (response: ServerResponse, claims: Record<string, unknown>) =>
        void sign(claims, ENTITY_STATEMENT_TYP).then((jwt) => response.writeHead(200, { 'content-type': 'application/entity-statement+jwt' }).end(jwt));
      const { authority_hints: _hints, ...claims } = real;
      const forgedTop = () => ({ ...claims, iat: seconds(clock.now()), exp: seconds(clock.now()) + 3600, jwks: { keys: [jwk] } });
      // Round one: the forged top, and its own statement about the organisation (the organisation's keys, correct claims).
      let statementsServed = 0;
      proxy.intercept = (request, _body, response) => {
        if (wardFederationOff(request, response)) return true;
        if (request.url === '/.well-known/openid-federation') return (entityStatement(response, forgedTop()), true);
        if (request.url?.startsWith('/v1/oidf/fetch')) {
          statementsServed += 1;
          entityStatement(response, { iss: real.iss, sub: orgConfiguration.sub, iat: seconds(clock.now()), exp: seconds(clock.now()) + 3600, jwks: orgConfiguration.jwks });
          return true;
        }
        return false;
      };
      clock.advance(6 * MINUTE);
      let logged = org.warnings.length;
      assert.deepEqual(await org.app.ward.oidfTrustChain(), held, 'the chain held is served');
      await eventually(() => (statementsServed > 0 ? true : undefined), 'the forged statement to be read');
      await rebuildRefused(org, logged, /failed: the chain's top \S+ \(read at \S+\) is not the pinned trust anchor/); // the round judged
      assert.deepEqual(await org.app.ward.oidfTrustChain(), held, 'the forged chain is refused: the held one still serves');
      const after = await readFederationState<Stored>(org.storage.db, 'superior');
      assert.deepEqual(after?.anchor, before?.anchor, 'the pin is unchanged');
      assert.deepEqual(after?.superior, before?.superior, "nothing of the middlebox's was learnt");
      assert.ok(!JSON.stringify(after).includes('middlebox'));
      // Round two: a refusal, and a fresh "revoked" signed by the middlebox at every status endpoint.
      let forgedStatus = 0;
      let refusals = 0;
      proxy.intercept = (request, body, response) => {
        if (wardFederationOff(request, response)) return true;
        if (request.url === '/.well-known/openid-federation') return (entityStatement(response, forgedTop()), true);
        if (request.url?.startsWith('/v1/oidf/fetch')) return ((refusals += 1), answerError(response, 404, 'not_found'));
        if (request.url?.startsWith('/v1/oidf/trust-mark-status')) {
          forgedStatus += 1;
          return answerRevoked(response, body, sign, proxy.url, clock.now());
        }
        return false;
      };
      clock.advance(MINUTE);
      logged = org.warnings.length;
      await org.app.ward.oidfTrustChain();
      await eventually(() => (refusals > 0 ? true : undefined), 'the forged refusal to be read');
      await rebuildRefused(org, logged, /refused this registry's statement \(not_found\), but the chain's top \S+ \(read at \S+\) is not the pinned trust anchor/); // the round judged
      assert.equal(forgedStatus, 0, 'no status is asked for a refusal under another top');
      assert.equal(org.app.ward.parentLink.revoked(), undefined);
      assert.equal(await storedRevocation(org), undefined);
    });

    test("a key rotation at the root keeps the organisation's chain: the pin follows the root's new key", async (t) => {
      const clock = movableClock();
      const { root, org, proxy } = await proxiedTiers(t, backend, { clock, logs: true });
      assert.ok(await org.app.ward.oidfTrustChain());
      proxy.intercept = (request, _body, response) => wardFederationOff(request, response);
      const oldKid = root.app.ward.signer.kid;
      const rotated = await root.call({ method: 'POST', url: '/v1/trust/keys/rotate', headers: writeHeaders(), payload: { retire_after_seconds: 3600 } });
      assert.equal(rotated.status, 201);
      const newKid = rotated.body.key_id as string;
      assert.notEqual(newKid, oldKid);
      clock.advance(6 * MINUTE);
      const chain = await eventually(async () => {
        const served = await org.app.ward.oidfTrustChain();
        const top = served?.at(-1);
        return top && decodeProtectedHeader(top).kid === newKid ? served : undefined;
      }, 'a chain whose top the root signed with its new key', 30_000, 250);
      assert.ok(chain);
      const stored = await readFederationState<{ anchor?: { entityId: string; keys: { kid?: string }[] } }>(org.storage.db, 'superior');
      assert.equal(stored?.anchor?.entityId, root.baseUrl);
      assert.ok(stored?.anchor?.keys.some((key) => key.kid === newKid), 'the pin holds the new key');
    });
  });
}
