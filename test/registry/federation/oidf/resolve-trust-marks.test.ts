// Resolve with trust marks (issue #31: OIDF §8.3.2) and the root's trust_mark_issuers (§3.1.1), in-process
// on each backend with the three tiers on loopback: the resolve response carries the subject's marks that
// are valid now, each verifying with jose against its issuer's federation keys; a revoked subject
// resolves no more; a mark not signed by a chain entity, expired, revoked at its issuer, of another type
// or subject, or by an issuer the root's trust_mark_issuers does not list for its type, is dropped.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compactVerify, createLocalJWKSet, decodeJwt, type JSONWebKeySet } from 'jose';
import { validateTrustChain } from '../../../../src/client/oidf/trust-chain-validation.ts';
import type { EntityStatementClaims } from '../../../../src/contract/openid-federation.ts';
import { validTrustMarks } from '../../../../src/registry/federation/oidf/resolve-trust-marks.ts';
import { oidfDeps } from '../../../../src/registry/federation/oidf/oidf-routes.ts';
import { threeTiers, type RunningRegistry } from '../../../helpers/federation.ts';
import { BACKENDS, registerAgent, ulidOf, writeHeaders } from '../../../helpers/registry.ts';
import { agentEntityIdentifier } from '../../../../src/contract/oidf-trust-marks.ts';
import { makeCertificate } from '../../agents/evidence/fixtures.ts';

const DELEGATED = 'urn:ward:trust-mark:delegated-registry';
const VALIDATED = 'urn:ward:trust-mark:trust-validated';
const ATTESTED = 'urn:ward:trust-mark:attested';

async function configurationOf(registry: RunningRegistry): Promise<Record<string, any>> {
  return decodeJwt((await registry.app.inject({ method: 'GET', url: '/.well-known/openid-federation' })).body);
}

/** `at`'s resolve answer about `sub` under `anchor`, verified with jose against `at`'s federation keys. */
async function resolve(at: RunningRegistry, sub: string, anchor: string) {
  const answer = await at.app.inject({ method: 'GET', url: `/v1/oidf/resolve?sub=${encodeURIComponent(sub)}&trust_anchor=${encodeURIComponent(anchor)}` });
  if (answer.statusCode !== 200) return { status: answer.statusCode, error: JSON.parse(answer.body).error as string, claims: undefined };
  const keys = (await configurationOf(at)).jwks as JSONWebKeySet;
  const { payload, protectedHeader } = await compactVerify(answer.body, createLocalJWKSet(keys));
  assert.equal(protectedHeader.typ, 'resolve-response+jwt');
  return { status: 200, error: undefined, claims: JSON.parse(new TextDecoder().decode(payload)) as Record<string, any> };
}

/** A mark's claims once it verifies with jose against `issuer`'s federation keys. */
async function verifiedMark(issuer: RunningRegistry, jwt: string): Promise<Record<string, any>> {
  const keys = (await configurationOf(issuer)).jwks as JSONWebKeySet;
  const { payload, protectedHeader } = await compactVerify(jwt, createLocalJWKSet(keys));
  assert.equal(protectedHeader.typ, 'trust-mark+jwt');
  return JSON.parse(new TextDecoder().decode(payload));
}

for (const backend of BACKENDS) {
  describe(`OpenID Federation resolve with trust marks [${backend}]`, () => {
    test('the root publishes trust_mark_issuers; a resolve answer carries the subject’s valid mark, which verifies with its issuer’s keys; a revoked subject resolves no more', async (t) => {
      const { root, sovereign, org } = await threeTiers(t, backend);
      const rootConfiguration = await configurationOf(root);
      assert.deepEqual(rootConfiguration.trust_mark_issuers, { [VALIDATED]: [], [ATTESTED]: [], [DELEGATED]: [root.baseUrl, sovereign.baseUrl] });
      assert.equal((await configurationOf(sovereign)).trust_mark_issuers, undefined, 'only the trust anchor publishes it');
      assert.equal((await configurationOf(org)).trust_mark_issuers, undefined);

      // At the root, under the root: the sovereign's mark about the organisation (its status asked over HTTP).
      // At the sovereign, under itself: its own mark, judged locally.
      for (const [at, anchor] of [[root, root], [sovereign, sovereign], [org, root]] as const) {
        const resolved = await resolve(at, org.baseUrl, anchor.baseUrl);
        assert.equal(resolved.status, 200, `${resolved.error}`);
        const marks = resolved.claims?.trust_marks as Array<{ trust_mark_type: string; trust_mark: string }>;
        assert.deepEqual(marks.map((entry) => entry.trust_mark_type), [DELEGATED]);
        const claims = await verifiedMark(sovereign, (marks[0] as { trust_mark: string }).trust_mark);
        assert.deepEqual([claims.iss, claims.sub, claims.ward_registry_id], [sovereign.baseUrl, org.baseUrl, org.id]);
        await assert.rejects(verifiedMark(org, (marks[0] as { trust_mark: string }).trust_mark), 'not by the subject’s own keys');
      }
      // The sovereign's own mark, from the root, resolved under the root.
      const ofSovereign = await resolve(root, sovereign.baseUrl, root.baseUrl);
      assert.equal((await verifiedMark(root, ofSovereign.claims?.trust_marks[0].trust_mark)).sub, sovereign.baseUrl);
      // The root has no marks: its resolve answer has none.
      assert.equal((await resolve(root, root.baseUrl, root.baseUrl)).claims?.trust_marks, undefined);

      const revoked = await sovereign.call({ method: 'POST', url: `/v1/registries/${encodeURIComponent(org.id)}/revoke`, headers: writeHeaders(), payload: { reason: 'contract ended' } });
      assert.equal(revoked.status, 200);
      const after = await resolve(root, org.baseUrl, root.baseUrl);
      assert.equal(after.status, 400, 'no chain: the sovereign gives no statement about a revoked child');
      assert.equal(after.error, 'invalid_trust_chain');
    });

    test('marks that are expired, revoked at their issuer, not by a chain entity, about another subject or type, or by an issuer the anchor does not list, are dropped', async (t) => {
      const { root, sovereign, org } = await threeTiers(t, backend);
      const resolved = await resolve(root, org.baseUrl, root.baseUrl);
      const chain = resolved.claims?.trust_chain as string[];
      const rootKeys = (await configurationOf(root)).jwks.keys;
      const valid = await validateTrustChain(chain, root.baseUrl, rootKeys, new Date());
      const good = resolved.claims?.trust_marks[0] as { trust_mark_type: string; trust_mark: string };
      const now = Math.floor(Date.now() / 1000);
      const base = { iss: sovereign.baseUrl, sub: org.baseUrl, trust_mark_type: DELEGATED, id: DELEGATED, iat: now - 10, exp: now + 600, ward_registry_id: org.id };
      const bySovereign = (claims: Record<string, unknown>) => sovereign.app.ward.signer.sign({ ...base, ...claims }, 'trust-mark+jwt');
      const entry = (trust_mark: string, trust_mark_type = DELEGATED) => ({ trust_mark_type, trust_mark });
      const bad = {
        expired: entry(await bySovereign({ iat: now - 7200, exp: now - 3600 })),
        revokedAtIssuer: entry(await bySovereign({ ward_registry_id: 'registry://gb/registries/someone-else' })),
        otherSubject: entry(await bySovereign({ sub: sovereign.baseUrl })),
        listedUnderAnotherType: entry(good.trust_mark, VALIDATED),
        selfIssued: entry(await org.app.ward.signer.sign({ ...base, iss: org.baseUrl }, 'trust-mark+jwt')),
        notInChain: entry(await (await threeTiers(t, backend)).sovereign.app.ward.signer.sign(base, 'trust-mark+jwt')),
        notAJwt: entry('not-a-jwt'),
      };
      const deps = oidfDeps(root.app.ward);
      const statusEndpoints = new Map([[sovereign.baseUrl, `${sovereign.baseUrl}/v1/oidf/trust-mark-status`], [org.baseUrl, `${org.baseUrl}/v1/oidf/trust-mark-status`]]);
      const withMarks = (marks: unknown[], anchorIssuers?: Record<string, string[]>): EntityStatementClaims[] => {
        const statements = valid.statements.map((statement) => ({ ...statement }));
        (statements[0] as EntityStatementClaims).trust_marks = marks as EntityStatementClaims['trust_marks'];
        if (anchorIssuers) (statements.at(-1) as EntityStatementClaims).trust_mark_issuers = anchorIssuers;
        return statements;
      };
      const kept = async (marks: unknown[], anchorIssuers?: Record<string, string[]>) =>
        (await validTrustMarks(deps, { statements: withMarks(marks, anchorIssuers), anchorKeys: rootKeys, statusEndpoints }, new Date())).map((mark) => mark.trust_mark);

      assert.deepEqual(await kept([good, ...Object.values(bad)]), [good.trust_mark], 'only the valid mark survives');
      for (const [why, mark] of Object.entries(bad)) assert.deepEqual(await kept([mark]), [], why);
      // The anchor's trust_mark_issuers decides: the same valid mark is dropped when the sovereign is not listed for its type,
      // or its type is not listed at all, and kept with an empty list (anyone).
      assert.deepEqual(await kept([good], { [DELEGATED]: [root.baseUrl] }), []);
      assert.deepEqual(await kept([good], { [VALIDATED]: [] }), []);
      assert.deepEqual(await kept([good], { [DELEGATED]: [] }), [good.trust_mark]);
      // Listing the organisation does not make its self-issued mark valid: its issuer says it is not its child.
      assert.deepEqual(await kept([bad.selfIssued], { [DELEGATED]: [org.baseUrl] }), []);
      // Without a status endpoint for the issuer, nothing vouches for the mark now.
      assert.deepEqual((await validTrustMarks(deps, { statements: withMarks([good]), anchorKeys: rootKeys, statusEndpoints: new Map() }, new Date())).length, 0);
    });

    test('the trust mark list endpoint names the entities with a mark of a type now, is published in the configuration, and refuses in OIDF’s format', async (t) => {
      const { root, sovereign, org } = await threeTiers(t, backend);
      const list = async (at: RunningRegistry, query: Record<string, string>) => {
        const answer = await at.app.inject({ method: 'GET', url: `/v1/oidf/trust-mark-list?${new URLSearchParams(query)}` });
        return { status: answer.statusCode, body: JSON.parse(answer.body), type: answer.headers['content-type'], cache: answer.headers['cache-control'] };
      };
      for (const registry of [root, sovereign, org]) {
        assert.equal((await configurationOf(registry)).metadata.federation_entity.federation_trust_mark_list_endpoint, `${registry.baseUrl}/v1/oidf/trust-mark-list`);
      }
      const children = await list(sovereign, { trust_mark_type: DELEGATED });
      assert.deepEqual([children.status, children.body, children.cache], [200, [org.baseUrl], 'no-store']);
      assert.match(String(children.type), /^application\/json/);
      assert.deepEqual((await list(root, { trust_mark_type: DELEGATED })).body, [sovereign.baseUrl]);
      assert.deepEqual((await list(sovereign, { trust_mark_type: DELEGATED, sub: org.baseUrl })).body, [org.baseUrl]);
      assert.deepEqual((await list(sovereign, { trust_mark_type: DELEGATED, sub: root.baseUrl })).body, [], 'not a child');
      assert.deepEqual((await list(org, { trust_mark_type: DELEGATED })).body, [], 'an organisation has no children');

      // Agent marks: only by sub, judged now; a suspension takes the agent off at once.
      const agent = await registerAgent(org, { trust: { certificates: [makeCertificate().pem], signatures: [], attestations: [] } });
      const sub = agentEntityIdentifier(org.baseUrl, agent.agent_id);
      assert.deepEqual((await list(org, { trust_mark_type: VALIDATED, sub })).body, [sub]);
      assert.deepEqual((await list(org, { trust_mark_type: ATTESTED, sub })).body, [], 'level 1 is not attested');
      const agentsUnasked = await list(org, { trust_mark_type: VALIDATED });
      assert.deepEqual([agentsUnasked.status, agentsUnasked.body.error], [400, 'invalid_request'], 'agents are not listed to anyone who asks');
      const suspended = await org.call({ method: 'POST', url: `/v1/agents/${ulidOf(agent.agent_id)}/suspend`, headers: writeHeaders(), payload: { reason: 'security review' } });
      assert.equal(suspended.status, 200);
      assert.deepEqual((await list(org, { trust_mark_type: VALIDATED, sub })).body, []);

      for (const [query, status, error] of [
        [{}, 400, 'invalid_request'],
        [{ trust_mark_type: DELEGATED, sub: 'not a url' }, 400, 'invalid_request'],
        [{ trust_mark_type: 'urn:ward:trust-mark:unknown' }, 404, 'not_found'],
      ] as const) {
        const refused = await list(sovereign, query);
        assert.deepEqual([refused.status, refused.body.error], [status, error], JSON.stringify(query));
      }
      const twice = await sovereign.app.inject({ method: 'GET', url: `/v1/oidf/trust-mark-list?trust_mark_type=${encodeURIComponent(DELEGATED)}&trust_mark_type=${encodeURIComponent(DELEGATED)}` });
      assert.deepEqual([twice.statusCode, JSON.parse(twice.body).error], [400, 'invalid_request']);

      // A revoked child leaves the list.
      const revoked = await sovereign.call({ method: 'POST', url: `/v1/registries/${encodeURIComponent(org.id)}/revoke`, headers: writeHeaders(), payload: { reason: 'contract ended' } });
      assert.equal(revoked.status, 200);
      assert.deepEqual((await list(sovereign, { trust_mark_type: DELEGATED })).body, []);
    });
  });
}
