// OpenID Federation 1.0 endpoints of the three tiers, in-process on each backend (issue #31 items 1–3):
// the entity configuration, the fetch and list endpoints, and the resolve endpoint. The outside
// resolver (`@openid-federation/core`) over real processes is test/federation/openid-federation.test.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compactVerify, createLocalJWKSet, decodeJwt, decodeProtectedHeader, type JSONWebKeySet } from 'jose';
import { threeTiers, type RunningRegistry } from '../../../helpers/federation.ts';
import { BACKENDS, writeHeaders } from '../../../helpers/registry.ts';

type Answer = { status: number; contentType: string; text: string; json: any };

async function get(registry: RunningRegistry, url: string): Promise<Answer> {
  const response = await registry.app.inject({ method: 'GET', url });
  const contentType = String(response.headers['content-type'] ?? '');
  return { status: response.statusCode, contentType, text: response.body, json: contentType.startsWith('application/json') ? JSON.parse(response.body) : undefined };
}

async function jwksOf(registry: RunningRegistry): Promise<JSONWebKeySet> {
  return (await registry.call({ method: 'GET', url: '/.well-known/jwks.json' })).body;
}

/** The claims of `jwt` once it verifies with `registry`'s published keys; its header's typ must be `typ`. */
async function verifiedBy(registry: RunningRegistry, jwt: string, typ: string): Promise<Record<string, any>> {
  const { payload, protectedHeader } = await compactVerify(jwt, createLocalJWKSet(await jwksOf(registry)));
  assert.equal(protectedHeader.typ, typ);
  assert.equal(protectedHeader.kid, registry.app.ward.signer.kid);
  return JSON.parse(new TextDecoder().decode(payload));
}

const fetchUrl = (sub: string) => `/v1/oidf/fetch?sub=${encodeURIComponent(sub)}`;
const resolveUrl = (sub: string, anchor: string) => `/v1/oidf/resolve?sub=${encodeURIComponent(sub)}&trust_anchor=${encodeURIComponent(anchor)}`;

for (const backend of BACKENDS) {
  describe(`OpenID Federation entity configuration, fetch and list endpoints [${backend}]`, () => {
    test('every tier publishes a self-signed entity configuration naming its keys, its parent and its endpoints', async (t) => {
      const { root, sovereign, org } = await threeTiers(t, backend);
      for (const [registry, parent] of [[root, undefined], [sovereign, root], [org, sovereign]] as const) {
        const answer = await get(registry, '/.well-known/openid-federation');
        assert.equal(answer.status, 200);
        assert.equal(answer.contentType, 'application/entity-statement+jwt', 'exactly: OIDF clients compare it as a string');
        const claims = await verifiedBy(registry, answer.text, 'entity-statement+jwt');
        assert.equal(claims.iss, registry.baseUrl);
        assert.equal(claims.sub, registry.baseUrl);
        assert.equal(claims.exp - claims.iat, 3600);
        assert.deepEqual(claims.jwks, await jwksOf(registry), 'the federation keys are the registry keys');
        assert.deepEqual(claims.authority_hints, parent ? [parent.baseUrl] : undefined);
        const { config } = registry.app.ward;
        assert.deepEqual(claims.metadata.ward_registry, {
          registry_id: registry.id,
          tier: config.REGISTRY_TIER,
          jurisdiction: 'GB',
          api_base_url: registry.baseUrl,
          server_metadata_uri: `${registry.baseUrl}/.well-known/agent-registry`,
          jwks_uri: `${registry.baseUrl}/.well-known/jwks.json`,
        });
        const federation = claims.metadata.federation_entity;
        assert.equal(federation.federation_resolve_endpoint, `${registry.baseUrl}/v1/oidf/resolve`);
        // OIDF §5.1.1: superiors publish fetch and list, a leaf (an organisational registry) must not.
        const superior = registry !== org;
        assert.equal(federation.federation_fetch_endpoint, superior ? `${registry.baseUrl}/v1/oidf/fetch` : undefined);
        assert.equal(federation.federation_list_endpoint, superior ? `${registry.baseUrl}/v1/oidf/list` : undefined);
      }
    });

    test('the fetch endpoint states a child’s keys, lifetime, constraints and Ward metadata, signed by its superior', async (t) => {
      const { root, sovereign, org } = await threeTiers(t, backend);
      const answer = await get(sovereign, fetchUrl(org.baseUrl));
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.contentType, 'application/entity-statement+jwt');
      const claims = await verifiedBy(sovereign, answer.text, 'entity-statement+jwt');
      assert.equal(claims.iss, sovereign.baseUrl);
      assert.equal(claims.sub, org.baseUrl);
      assert.equal(claims.exp - claims.iat, 900, 'REGISTRY_DELEGATION_TTL_SECONDS');
      assert.deepEqual(claims.jwks, await jwksOf(org));
      assert.deepEqual(claims.constraints, { max_path_length: 0, allowed_entity_types: ['ward_registry'] });
      assert.deepEqual(claims.metadata, { ward_registry: { registry_id: org.id, tier: 'organisational', jurisdiction: 'GB' } });
      assert.deepEqual(claims.metadata_policy, { ward_registry: { jurisdiction: { one_of: ['GB'] }, tier: { one_of: ['organisational'] } } });
      assert.equal(claims.source_endpoint, `${sovereign.baseUrl}/v1/oidf/fetch`);
      assert.equal(claims.authority_hints, undefined, 'a subordinate statement carries no authority_hints');

      const aboutSovereign = await verifiedBy(root, (await get(root, fetchUrl(`${sovereign.baseUrl}/`))).text, 'entity-statement+jwt');
      assert.equal(aboutSovereign.sub, sovereign.baseUrl, 'a trailing slash names the same entity');
      assert.deepEqual(aboutSovereign.constraints, { max_path_length: 1, allowed_entity_types: ['ward_registry'] });
      assert.deepEqual(aboutSovereign.metadata_policy.ward_registry.tier, { one_of: ['sovereign', 'organisational'] });
    });

    test('the fetch endpoint refuses in OIDF’s error format: unknown, missing, own or malformed subjects', async (t) => {
      const { root, sovereign, org } = await threeTiers(t, backend);
      const cases: Array<[string, number, string]> = [
        [fetchUrl('https://unknown.example'), 404, 'not_found'],
        [fetchUrl(org.baseUrl), 404, 'not_found'],
        ['/v1/oidf/fetch', 400, 'invalid_request'],
        [fetchUrl(root.baseUrl), 400, 'invalid_request'],
        [fetchUrl('registry://gb/registries/nhs'), 400, 'invalid_request'],
        [`${fetchUrl(sovereign.baseUrl)}&sub=${encodeURIComponent(sovereign.baseUrl)}`, 400, 'invalid_request'],
      ];
      for (const [url, status, error] of cases) {
        const answer = await get(root, url);
        assert.equal(answer.status, status, url);
        assert.match(answer.contentType, /^application\/json/);
        assert.equal(answer.json.error, error, url);
        assert.equal(typeof answer.json.error_description, 'string');
      }
    });

    test('a revoked child gets no statement and leaves the list; the list filters by intermediate, entity type and trust mark', async (t) => {
      const { root, sovereign, org } = await threeTiers(t, backend);
      assert.deepEqual((await get(root, '/v1/oidf/list')).json, [sovereign.baseUrl]);
      assert.deepEqual((await get(root, '/v1/oidf/list?intermediate=true')).json, [sovereign.baseUrl]);
      assert.deepEqual((await get(root, '/v1/oidf/list?intermediate=false')).json, []);
      assert.deepEqual((await get(sovereign, '/v1/oidf/list?intermediate=false&entity_type=ward_registry')).json, [org.baseUrl]);
      assert.deepEqual((await get(sovereign, '/v1/oidf/list?entity_type=openid_provider')).json, []);
      // Every active child with an address holds this registry's delegated-registry mark, and no other.
      assert.deepEqual((await get(sovereign, '/v1/oidf/list?trust_marked=true')).json, [org.baseUrl]);
      assert.deepEqual((await get(sovereign, `/v1/oidf/list?trust_mark_type=${encodeURIComponent('urn:ward:trust-mark:delegated-registry')}`)).json, [org.baseUrl]);
      assert.deepEqual((await get(sovereign, `/v1/oidf/list?trust_mark_type=${encodeURIComponent('urn:ward:trust-mark:trust-validated')}`)).json, []);
      assert.equal((await get(sovereign, '/v1/oidf/list?trust_marked=maybe')).json.error, 'invalid_request');
      assert.equal((await get(sovereign, '/v1/oidf/list?intermediate=yes')).json.error, 'invalid_request');

      const revoked = await sovereign.call({ method: 'POST', url: `/v1/registries/${encodeURIComponent(org.id)}/revoke`, headers: writeHeaders(), payload: { reason: 'test' } });
      assert.equal(revoked.status, 200);
      const answer = await get(sovereign, fetchUrl(org.baseUrl));
      assert.equal(answer.status, 404);
      assert.equal(answer.json.error, 'not_found');
      assert.deepEqual((await get(sovereign, '/v1/oidf/list')).json, []);
    });

  });

  describe(`OpenID Federation resolve endpoint [${backend}]`, () => {
    test('the resolve endpoint answers a signed, policy-applied chain from the organisation to the root', async (t) => {
      const { root, sovereign, org } = await threeTiers(t, backend);
      for (const resolver of [root, org]) {
        const answer = await get(resolver, resolveUrl(org.baseUrl, root.baseUrl));
        assert.equal(answer.status, 200, answer.text);
        assert.equal(answer.contentType, 'application/resolve-response+jwt');
        const claims = await verifiedBy(resolver, answer.text, 'resolve-response+jwt');
        assert.equal(claims.iss, resolver.baseUrl);
        assert.equal(claims.sub, org.baseUrl);
        assert.equal(claims.trust_chain.length, 4);
        const chain = claims.trust_chain.map((jwt: string) => decodeJwt(jwt));
        assert.deepEqual(chain.map((es: any) => [es.iss, es.sub]), [
          [org.baseUrl, org.baseUrl],
          [sovereign.baseUrl, org.baseUrl],
          [root.baseUrl, sovereign.baseUrl],
          [root.baseUrl, root.baseUrl],
        ]);
        assert.ok(claims.trust_chain.every((jwt: string) => decodeProtectedHeader(jwt).typ === 'entity-statement+jwt'));
        assert.equal(claims.exp, Math.min(...chain.map((es: any) => es.exp)), 'exp is the chain’s earliest');
        assert.equal(claims.metadata.ward_registry.registry_id, org.id);
        assert.equal(claims.metadata.ward_registry.tier, 'organisational');
        assert.ok(claims.metadata.federation_entity.federation_resolve_endpoint);
      }
      const onlyWard = await get(root, `${resolveUrl(org.baseUrl, root.baseUrl)}&entity_type=ward_registry`);
      assert.deepEqual(Object.keys(decodeJwt(onlyWard.text).metadata as object), ['ward_registry']);
      const self = await verifiedBy(root, (await get(root, resolveUrl(root.baseUrl, root.baseUrl))).text, 'resolve-response+jwt');
      assert.equal(self.trust_chain.length, 1, 'the trust anchor resolves to its own configuration');
    });

    test('resolve refuses an unknown trust anchor, a missing parameter, and a chain broken by revocation', async (t) => {
      const { root, sovereign, org } = await threeTiers(t, backend);
      const unknownAnchor = await get(root, resolveUrl(org.baseUrl, 'https://other-anchor.example'));
      assert.equal(unknownAnchor.status, 404);
      assert.equal(unknownAnchor.json.error, 'invalid_trust_anchor');
      // An anchor below the resolver, not in its own chain: the root would take that anchor's word for its keys, and sign for it.
      const belowAnchored = await get(root, resolveUrl(org.baseUrl, sovereign.baseUrl));
      assert.equal(belowAnchored.status, 404);
      assert.equal(belowAnchored.json.error, 'invalid_trust_anchor');
      assert.equal((await get(root, `/v1/oidf/resolve?sub=${encodeURIComponent(org.baseUrl)}`)).json.error, 'invalid_request');

      await sovereign.call({ method: 'POST', url: `/v1/registries/${encodeURIComponent(org.id)}/revoke`, headers: writeHeaders(), payload: { reason: 'test' } });
      const broken = await get(root, resolveUrl(org.baseUrl, root.baseUrl));
      assert.equal(broken.status, 400);
      assert.equal(broken.json.error, 'invalid_trust_chain');
      assert.match(broken.json.error_description, /not_found/);
    });
  });
}
