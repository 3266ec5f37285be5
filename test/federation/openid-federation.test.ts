// Acceptance of issue #31 (OpenID Federation 1.0) with three real registry processes (`ward federation
// up`): an outside OIDF library, `@openid-federation/core`'s `resolveTrustChains`, resolves the
// organisation → sovereign → root over plain HTTP with the root's entity configuration as its trust
// anchor (the library accepts http:// entity identifiers: no TLS needed on loopback), and fails for an
// expired statement, a key rolled over without a new statement, and a revoked subordinate.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { resolveTrustChains } from '@openid-federation/core';
import { compactVerify, createLocalJWKSet, decodeJwt, decodeProtectedHeader, type JSONWebKeySet } from 'jose';
import { federationUp, type Federation, type RunningTier } from '../../src/service/federation-up.ts';
import { fetchBundle, getJson, postJson, readSigningKey, resignBundle, startRegistryProcess, stopRegistryProcess } from '../helpers/federation-processes.ts';
import { runWard } from '../helpers/ward-process.ts';
import { writeFileSync } from 'node:fs';
import { eventually } from '../helpers/eventually.ts';
import { oidfVerifyHook } from '../helpers/oidf-verify-hook.ts';

/** Short-lived subordinate statements; entity configurations live an hour. */
const TTL_SECONDS = 60;
const FEDERATION_ENV = { REGISTRY_DELEGATION_TTL_SECONDS: String(TTL_SECONDS) };

/** The running federation, shared by the tests below (they run in order). */
const tiers = {} as { dir: string; federation?: Federation; root: RunningTier; sovereign: RunningTier; org: RunningTier; extra: Set<ChildProcess> };

/** A verify hook pinning the root's keys as it publishes them now. */
async function rootPinningHook(options: { signatureOnly?: boolean } = {}) {
  return oidfVerifyHook({ entityId: tiers.root.url, jwks: (await getJson(`${tiers.root.url}/.well-known/jwks.json`)).body }, options);
}

/** Resolves `entityId` under the root with {@link rootPinningHook}; with what the hook accepted and refused. */
async function resolve(entityId: string, options: { signatureOnly?: boolean } = {}) {
  const hook = await rootPinningHook(options);
  const chains = await resolveTrustChains({ entityId, trustAnchorEntityIds: [tiers.root.url], verifyJwtCallback: hook.verifyJwtCallback });
  return { chains, rejections: hook.rejections, accepted: hook.accepted };
}

/**
 * The resolution fails: no valid chain, or the library gives up on a statement (it throws when a
 * statement cannot be had or its signature check says no). `why` matches the reasons given.
 */
async function assertUnresolvable(entityId: string, why: RegExp) {
  const hook = await rootPinningHook();
  let outcome: string;
  try {
    const chains = await resolveTrustChains({ entityId, trustAnchorEntityIds: [tiers.root.url], verifyJwtCallback: hook.verifyJwtCallback });
    assert.equal(chains.length, 0, 'no valid trust chain');
    outcome = 'no chain';
  } catch (error) {
    outcome = (error as Error).message;
  }
  assert.match([outcome, ...hook.rejections].join('; '), why);
}

/** An organisational registry on the organisation's port, name and parent, with the database in `dataDir`. */
async function startOrgProcess(dataDir: string) {
  const started = await startRegistryProcess({ tier: 'organisational', name: tiers.org.name, jurisdiction: tiers.org.jurisdiction, dataDir, port: Number(new URL(tiers.org.url).port), parentUrl: tiers.sovereign.url, env: FEDERATION_ENV });
  tiers.extra.add(started.process);
  assert.equal(started.url, tiers.org.url);
  return started;
}

describe('OpenID Federation: three real registry processes resolved by @openid-federation/core', () => {
  let root: RunningTier;
  let sovereign: RunningTier;
  let org: RunningTier;

  before(async () => {
    tiers.extra = new Set();
    tiers.dir = mkdtempSync(join(tmpdir(), 'ward-openid-federation-'));
    tiers.federation = await federationUp({ dataDir: tiers.dir, basePort: 0, env: FEDERATION_ENV });
    [root, sovereign, org] = tiers.federation.tiers as [RunningTier, RunningTier, RunningTier];
    Object.assign(tiers, { root, sovereign, org });
  });

  after(async () => {
    await Promise.all([...tiers.extra].map((child) => stopRegistryProcess(child)));
    await tiers.federation?.stop();
    if (tiers.dir) rmSync(tiers.dir, { recursive: true, force: true });
  });

  test('the organisation resolves to the root: leaf configuration, the sovereign’s and the root’s statements, the root’s configuration', async () => {
    const { chains, rejections } = await resolve(org.url);
    assert.deepEqual(rejections, []);
    assert.equal(chains.length, 1);
    const [chain] = chains as [(typeof chains)[number]];
    // The library keeps the leaf's configuration apart from `chain` (the statements above it, anchor last).
    assert.deepEqual([chain.rawLeafEntityConfiguration.iss, chain.rawLeafEntityConfiguration.sub], [org.url, org.url]);
    assert.deepEqual(
      chain.chain.map((statement) => [statement.iss, statement.sub]),
      [
        [sovereign.url, org.url],
        [root.url, sovereign.url],
        [root.url, root.url],
      ],
    );
    assert.equal(chain.trustAnchorEntityConfiguration.sub, root.url);
    assert.equal(chain.chain[0]?.constraints?.max_path_length, 0);
    assert.equal(chain.chain[1]?.constraints?.max_path_length, 1);
    assert.equal(chain.resolvedLeafMetadata?.federation_entity?.federation_resolve_endpoint, `${org.url}/v1/oidf/resolve`);

    const sovereignChains = (await resolve(sovereign.url)).chains;
    assert.deepEqual(sovereignChains[0]?.chain.map((statement) => statement.sub), [sovereign.url, root.url]);

    // Ward's own resolve endpoint answers the same chain, signed by the resolver.
    const response = await fetch(`${root.url}/v1/oidf/resolve?sub=${encodeURIComponent(org.url)}&trust_anchor=${encodeURIComponent(root.url)}`);
    assert.equal(response.headers.get('content-type'), 'application/resolve-response+jwt');
    const resolved = decodeJwt(await response.text());
    assert.deepEqual(
      (resolved.trust_chain as string[]).map((jwt) => [decodeJwt(jwt).iss, decodeJwt(jwt).sub]),
      [chain.rawLeafEntityConfiguration, ...chain.chain].map((statement) => [statement.iss, statement.sub]),
    );
    assert.equal((resolved.metadata as Record<string, Record<string, unknown>>).ward_registry?.registry_id, org.registryId);
  });

  test('ward trust verify verifies an organisation agent’s bundle back to the root through the OIDF chain, with only the root’s keys', async (t) => {
    const [agent] = tiers.federation?.agents.organisation ?? [];
    assert.ok(agent, 'federation up seeds organisation agents');
    // The organisation builds its chain once it is asked for a bundle (and its superiors answer).
    const bundle = await eventually(async () => {
      const candidate = await fetchBundle(org, agent);
      return candidate.trust_chain ? candidate : undefined;
    }, 'a bundle carrying the OIDF trust chain');
    assert.deepEqual(bundle.trust_chain?.map((jwt) => decodeJwt(jwt).sub), [org.url, org.url, sovereign.url, root.url]);
    // The form after the migration: no Ward delegation statements, the OIDF chain alone proves the issuer.
    const alone = await resignBundle(bundle, { statements: [], delegation_chain: [org.registryId] }, await readSigningKey(join(tiers.dir, org.name)));
    const rootKeys = (await getJson(`${root.url}/.well-known/jwks.json`)).body;
    const write = (name: string, value: unknown) => {
      const path = join(tiers.dir, name);
      writeFileSync(path, JSON.stringify(value));
      return path;
    };
    const cli = await runWard(t, ['trust', 'verify', write('oidf-bundle.json', alone), '--anchor', write('root-jwks.json', rootKeys), '--online']);
    assert.equal(cli.code, 0, `${cli.stdout}${cli.stderr}`);
    assert.match(cli.stdout, /oidf:\s+OpenID Federation trust chain .*→.*/);
    assert.match(cli.stdout, /result:\s+valid/);
    for (const url of [org.url, sovereign.url, root.url]) assert.ok(cli.stdout.includes(url), url);

    // The sovereign's keys as the anchor: the chain does not validate, and the CLI says so.
    const sovereignKeys = (await getJson(`${sovereign.url}/.well-known/jwks.json`)).body;
    const refused = await runWard(t, ['trust', 'verify', write('oidf-bundle.json', alone), '--anchor', write('sovereign-jwks.json', sovereignKeys)]);
    assert.equal(refused.code, 1, refused.stdout);
    assert.match(refused.stdout, /TRUST_CHAIN_INVALID/);
  });

  test('an expired subordinate statement makes resolution fail', async (t) => {
    // The resolver's clock past the statements' exp (TTL_SECONDS) but inside the configurations' hour.
    t.mock.timers.enable({ apis: ['Date'], now: Date.now() + (TTL_SECONDS + 120) * 1000 });
    const { chains, accepted } = await resolve(org.url);
    t.mock.timers.reset();
    assert.equal(chains.length, 0);
    // Every statement was fetched and its signature held: the chain fell for its exp alone.
    assert.deepEqual(accepted.sort(), [`${org.url} → ${org.url}`, `${root.url} → ${root.url}`, `${root.url} → ${sovereign.url}`, `${sovereign.url} → ${org.url}`, `${sovereign.url} → ${sovereign.url}`].sort());
    assert.equal((await resolve(org.url)).chains.length, 1, 'control: resolves on time');
  });

  test('a key rolled over with a new statement resolves: the sovereign names the organisation’s new key', async () => {
    const rotated = await postJson(`${org.url}/v1/trust/keys/rotate`, { retire_after_seconds: 0 });
    assert.equal(rotated.status, 201, JSON.stringify(rotated.body));
    const newKid = rotated.body.key_id as string;
    // The organisation tells the sovereign at once (its Ward grant fetch carries the new keys).
    await eventually(async () => {
      const statement = await (await fetch(`${sovereign.url}/v1/oidf/fetch?sub=${encodeURIComponent(org.url)}`)).text();
      return (decodeJwt(statement).jwks as { keys: Array<{ kid: string }> }).keys.some((key) => key.kid === newKid) || undefined;
    }, 'the sovereign’s statement naming the new key');
    assert.equal(decodeProtectedHeader(await (await fetch(`${org.url}/.well-known/openid-federation`)).text()).kid, newKid, 'the configuration is signed with the new key');
    const { chains, rejections } = await resolve(org.url);
    assert.deepEqual(rejections, []);
    assert.equal(chains.length, 1);
  });

  test('a key rolled over without a new statement makes resolution fail', async () => {
    // The organisation's address now answers with a key its superior never vouched for: a registry
    // that lost its key (or an impostor) on a fresh database, same name, same port, same parent.
    await stopRegistryProcess(org.process);
    const impostor = await startOrgProcess(join(tiers.dir, 'impostor'));
    await assertUnresolvable(org.url, /does not name the key/);
    // What the hook adds: the library on its own checks each signature with the signer's own
    // published keys only, and would accept the chain (OIDF §10.2 asks ES[j] to verify with ES[j+1].jwks).
    assert.equal((await resolve(org.url, { signatureOnly: true })).chains.length, 1);
    // Ward's own resolver refuses it too, for the same reason.
    const wardResolve = await getJson(`${root.url}/v1/oidf/resolve?sub=${encodeURIComponent(org.url)}&trust_anchor=${encodeURIComponent(root.url)}`);
    assert.equal(wardResolve.status, 400);
    assert.equal(wardResolve.body.error, 'invalid_trust_chain');
    assert.match(wardResolve.body.error_description, /as its superior states them/);

    // The organisation back with its own key: it resolves again.
    await stopRegistryProcess(impostor.process);
    await startOrgProcess(join(tiers.dir, org.name));
    assert.equal((await resolve(org.url)).chains.length, 1);
  });

  test('a revoked subordinate makes resolution fail: its superior gives no statement about it, and its trust mark’s status says revoked', async () => {
    // The sovereign's delegated-registry mark, carried in the organisation's configuration, verifies
    // with jose against the sovereign's federation keys and is active at the sovereign's status endpoint.
    const configuration = decodeJwt(await (await fetch(`${org.url}/.well-known/openid-federation`)).text());
    const [entry] = configuration.trust_marks as Array<{ trust_mark_type: string; trust_mark: string }>;
    assert.equal(entry?.trust_mark_type, 'urn:ward:trust-mark:delegated-registry');
    const sovereignConfiguration = decodeJwt(await (await fetch(`${sovereign.url}/.well-known/openid-federation`)).text());
    const { payload } = await compactVerify(entry.trust_mark, createLocalJWKSet(sovereignConfiguration.jwks as JSONWebKeySet));
    assert.deepEqual([JSON.parse(new TextDecoder().decode(payload)).iss, JSON.parse(new TextDecoder().decode(payload)).sub], [sovereign.url, org.url]);
    const statusEndpoint = (sovereignConfiguration.metadata as Record<string, Record<string, string>>).federation_entity?.federation_trust_mark_status_endpoint as string;
    const statusOf = async () => {
      const answer = await fetch(statusEndpoint, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ trust_mark: entry.trust_mark }) });
      assert.equal(answer.headers.get('content-type'), 'application/trust-mark-status-response+jwt', await answer.clone().text());
      const { payload: status } = await compactVerify(await answer.text(), createLocalJWKSet(sovereignConfiguration.jwks as JSONWebKeySet));
      return JSON.parse(new TextDecoder().decode(status)).status as string;
    };
    assert.equal(await statusOf(), 'active');

    const revoked = await postJson(`${sovereign.url}/v1/registries/${encodeURIComponent(org.registryId)}/revoke`, { reason: 'contract ended' });
    assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
    const fetched = await getJson(`${sovereign.url}/v1/oidf/fetch?sub=${encodeURIComponent(org.url)}`);
    assert.deepEqual([fetched.status, fetched.body.error], [404, 'not_found']);
    await assertUnresolvable(org.url, /content-type|not_found|no chain/);
    assert.equal((await resolve(sovereign.url)).chains.length, 1, 'the sovereign still resolves');
    assert.equal(await statusOf(), 'revoked');
  });
});
