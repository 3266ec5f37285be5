// Acceptance of issue #5 with three real registry processes (`ward federation up`): root → sovereign
// (GB) → organisational, each its own `ward registry` process and SQLite database, reached only over
// HTTP. The fine-grained verifier rules are tested in-process (test/registry/federation, test/registry/
// trust); this file shows that they hold end to end. Forged statements are signed with the registries'
// real keys, read from their databases, so the only thing wrong with each is what the test changes.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { decodeProtectedHeader } from 'jose';
import type { RegistrySigner } from '../../src/registry/signing-keys/registry-signer.ts';
import { childConstraints, signDelegationStatement, type DelegationStatementClaims } from '../../src/contract/delegation-statement.ts';
import { verifyTrustBundle, type BundleVerification } from '../../src/client/trust/bundle-verifier.ts';
import { SKEW_MS } from '../../src/core/crypto/key-set.ts';
import type { SignedTrustBundle } from '../../src/contract/trust-bundle.ts';
import { federationUp, type Federation, type RunningTier } from '../../src/service/federation-up.ts';
import {
  fetchAnchor,
  fetchBundle,
  getJson,
  keySigner,
  postJson,
  readSigningKey,
  resignBundle,
  startRegistryProcess,
  statementClaims,
  stopRegistryProcess,
  type RegistryProcessOptions,
} from '../helpers/federation-processes.ts';
import { eventually } from '../helpers/eventually.ts';
import { runWard } from '../helpers/ward-process.ts';

/** Short-lived statements: the registries renew them every 20 s, so a root key rotation reaches a bundle within 40 s. */
const TTL_SECONDS = 60;
const FEDERATION_ENV = { REGISTRY_DELEGATION_TTL_SECONDS: String(TTL_SECONDS) };
const RETIRE_AFTER_SECONDS = 5;

const codes = (result: BundleVerification) => [...new Set(result.errors.map((error) => error.code))].sort();
const kidOf = (jws: string) => decodeProtectedHeader(jws).kid;

/** The statements of a bundle from the root down: root → sovereign, sovereign → organisation. */
function statementsOf(bundle: SignedTrustBundle): [string, string] {
  assert.equal(bundle.statements.length, 2, 'a three-tier chain carries two statements');
  return bundle.statements as [string, string];
}


describe('federation: three real registry processes', () => {
  let dir: string;
  let federation: Federation | undefined;
  let root: RunningTier;
  let sovereign: RunningTier;
  let org: RunningTier;
  let sovereignAgent: string;
  let orgTriageAgent: string;
  let orgConsentAgent: string;
  /** Registries a test starts beside the federation; stopped at the end whatever happens. */
  const extraProcesses = new Set<ChildProcess>();

  const dataDirOf = (tier: RunningTier) => join(dir, tier.name);
  const chainIds = () => [root.registryId, sovereign.registryId, org.registryId];
  const orgBundle = () => fetchBundle(org, orgTriageAgent);
  const writeJson = (name: string, value: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(value));
    return path;
  };

  async function startExtraRegistry(options: RegistryProcessOptions) {
    const registry = await startRegistryProcess(options);
    extraProcesses.add(registry.process);
    return registry;
  }

  /** A statement about the organisation with the claims of `template` (its real one) and `overrides`, signed by `signer`. */
  async function statementAboutOrg(signer: Pick<RegistrySigner, 'sign'>, template: string, overrides: Partial<DelegationStatementClaims> = {}) {
    const { iat: _iat, nbf: _nbf, exp: _exp, jti: _jti, ...claims } = { ...statementClaims(template), ...overrides };
    return signDelegationStatement(signer, { ...claims, now: new Date(), ttlSeconds: TTL_SECONDS });
  }

  /** `bundle` with statement 1 replaced, signed again by the organisation so the statement is all that differs. */
  async function withOrgStatement(bundle: SignedTrustBundle, statement: string) {
    const [toSovereign] = statementsOf(bundle);
    return resignBundle(bundle, { statements: [toSovereign, statement] }, await readSigningKey(dataDirOf(org)));
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ward-three-registries-'));
    federation = await federationUp({ dataDir: dir, basePort: 0, env: FEDERATION_ENV });
    [root, sovereign, org] = federation.tiers as [RunningTier, RunningTier, RunningTier];
    [sovereignAgent] = federation.agents.sovereign as [string];
    [orgTriageAgent, orgConsentAgent] = federation.agents.organisation as [string, string];
  });

  after(async () => {
    await Promise.all([...extraProcesses].map((child) => stopRegistryProcess(child)));
    await federation?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('an organisation agent verifies back to the root with only the root anchor: offline, online, with ward trust verify, and as routing evidence', async (t) => {
    const anchor = await fetchAnchor(root);
    const bundle = await orgBundle();
    assert.deepEqual(bundle.delegation_chain, chainIds());
    assert.equal(bundle.statements.length, 2);

    assert.deepEqual(verdict(await verifyTrustBundle(bundle, anchor)), { valid: true, subject: orgTriageAgent, errors: [] });
    // Online, the root confirms the sovereign and the sovereign confirms the organisation.
    assert.deepEqual(verdict(await verifyTrustBundle(bundle, anchor, new Date(), { online: {} })), { valid: true, subject: orgTriageAgent, errors: [] });

    const cli = await runWard(t, ['trust', 'verify', writeJson('bundle.json', bundle), '--anchor', writeJson('anchor.json', anchor), '--online']);
    assert.equal(cli.code, 0, `${cli.stdout}${cli.stderr}`);
    assert.match(cli.stdout, /result:\s+valid \(every statement confirmed active by its issuer\)/);
    for (const id of [...chainIds(), orgTriageAgent]) assert.ok(cli.stdout.includes(id), id);

    const routed = await postJson(`${org.url}/v1/route`, { target: orgTriageAgent });
    assert.equal(routed.status, 200, JSON.stringify(routed.body));
    assert.deepEqual(routed.body.evidence.delegation_chain, chainIds());
  });

  test('a tampered statement fails: the organisation widening its own constraints breaks the sovereign’s signature', async () => {
    const anchor = await fetchAnchor(root);
    const bundle = await orgBundle();
    const [header, payload, signature] = statementsOf(bundle)[1].split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as DelegationStatementClaims;
    const widened = { ...claims, constraints: { max_path_length: 1, allowed_jurisdictions: ['GB', 'FR'] } };
    const tampered = `${header}.${Buffer.from(JSON.stringify(widened)).toString('base64url')}.${signature}`;

    // Control: the same bundle re-signed by the organisation, untouched, verifies.
    assert.equal((await verifyTrustBundle(await withOrgStatement(bundle, statementsOf(bundle)[1]), anchor)).valid, true);
    const result = await verifyTrustBundle(await withOrgStatement(bundle, tampered), anchor);
    assert.equal(result.valid, false);
    assert.deepEqual(codes(result), ['STATEMENT_SIGNATURE_INVALID']);
    assert.match(result.errors[0]?.message ?? '', /^statement 1 /);
  });

  test('a statement naming a key URL (jku, x5u) is refused even when genuinely signed, and the URL is never fetched', async (t) => {
    // The URL serves the sovereign's real keys, counting every request.
    const sovereignJwks = (await getJson(`${sovereign.url}/.well-known/jwks.json`)).body;
    let requests = 0;
    const server = createServer((_request, response) => {
      requests += 1;
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(sovereignJwks));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const keyUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`;

    const anchor = await fetchAnchor(root);
    const bundle = await orgBundle();
    const sovereignKey = await readSigningKey(dataDirOf(sovereign));
    for (const member of ['jku', 'x5u']) {
      const statement = await statementAboutOrg(keySigner(sovereignKey, { [member]: keyUrl }), statementsOf(bundle)[1]);
      assert.equal(decodeProtectedHeader(statement)[member], keyUrl);
      const forged = await withOrgStatement(bundle, statement);
      for (const options of [{}, { online: {} }]) {
        const result = await verifyTrustBundle(forged, anchor, new Date(), options);
        assert.equal(result.valid, false, member);
        assert.deepEqual(codes(result), ['KEY_URL_REFUSED'], `${member}: ${JSON.stringify(result.errors)}`);
      }
    }
    assert.equal(requests, 0, 'the verifier never fetched the key URL');
    await fetch(keyUrl).then((response) => response.arrayBuffer());
    assert.equal(requests, 1, 'control: the server does count requests');
  });

  test('a statement about the organisation from a registry that is not its parent fails', async () => {
    const other = await startExtraRegistry({ tier: 'sovereign', name: 'nhs-scotland', jurisdiction: 'GB', dataDir: join(dir, 'nhs-scotland') });
    const otherKey = await readSigningKey(other.dataDir);
    await stopRegistryProcess(other.process);

    const anchor = await fetchAnchor(root);
    const bundle = await orgBundle();
    const [, toOrg] = statementsOf(bundle);
    // Signed openly as itself: its key is not one the root vouched for as the sovereign's.
    const asItself = await verifyTrustBundle(await withOrgStatement(bundle, await statementAboutOrg(keySigner(otherKey), toOrg, { iss: other.registryId })), anchor);
    assert.deepEqual(codes(asItself), ['STATEMENT_KEY_UNKNOWN']);
    assert.equal(asItself.valid, false);
    // Posing as the sovereign, with the sovereign's kid: the signature does not verify with that key.
    const posing = await verifyTrustBundle(await withOrgStatement(bundle, await statementAboutOrg(keySigner(otherKey, { kid: kidOf(toOrg) }), toOrg)), anchor);
    assert.deepEqual(codes(posing), ['STATEMENT_SIGNATURE_INVALID']);
    assert.equal(posing.valid, false);
  });

  test('an expired statement fails: an offline copy lapses with its short-lived statements', async () => {
    const anchor = await fetchAnchor(root);
    const bundle = await orgBundle();
    const lifetimes = statementsOf(bundle).map((statement) => statementClaims(statement));
    for (const { iat, exp } of lifetimes) assert.equal(exp - iat, TTL_SECONDS, 'each registry issues statements with REGISTRY_DELEGATION_TTL_SECONDS');

    const afterExpiry = new Date(Math.max(...lifetimes.map(({ exp }) => exp)) * 1000 + SKEW_MS + 1000);
    const result = await verifyTrustBundle(bundle, anchor, afterExpiry);
    assert.equal(result.valid, false);
    assert.deepEqual(codes(result), ['STATEMENT_EXPIRED']);
  });

  test('a child claiming a foreign jurisdiction fails: refused at registration, and a statement naming it breaks the chain', async () => {
    const french = await startExtraRegistry({ tier: 'organisational', name: 'aphp', jurisdiction: 'FR', dataDir: join(dir, 'aphp') });
    const frenchKey = await readSigningKey(french.dataDir);
    const frenchJwks = (await getJson(`${french.url}/.well-known/jwks.json`)).body;
    const anchors = (await getJson(`${french.url}/v1/trust/anchors`)).body.anchors as Array<Record<string, string>>;

    const registered = await postJson(`${sovereign.url}/v1/registries`, {
      display_name: 'AP-HP',
      name: 'aphp',
      jurisdiction: 'FR',
      tier: 'organisational',
      trust_anchors: anchors.map(({ key_id, alg, jwks_uri, thumbprint_sha256 }) => ({ key_id, alg, jwks_uri, thumbprint_sha256 })),
      api_base_url: french.url,
    });
    assert.equal(registered.status, 422, JSON.stringify(registered.body));
    assert.equal(registered.body.error.code, 'TIER_VIOLATION');
    assert.equal((await getJson(`${sovereign.url}/v1/registries/${encodeURIComponent(french.registryId)}`)).status, 404, 'nothing was registered');
    await stopRegistryProcess(french.process);

    // The sovereign's real key signs it anyway: the root's statement above allows GB only.
    const anchor = await fetchAnchor(root);
    const bundle = await orgBundle();
    const [toSovereign] = statementsOf(bundle);
    const toFrench = await signDelegationStatement(keySigner(await readSigningKey(dataDirOf(sovereign))), {
      iss: sovereign.registryId,
      sub: french.registryId,
      tier: 'organisational',
      jurisdiction: 'FR',
      jwks: frenchJwks,
      api_base_url: french.url,
      constraints: childConstraints('sovereign', 'FR'),
      now: new Date(),
      ttlSeconds: TTL_SECONDS,
    });
    const frenchBundle = await resignBundle(
      bundle,
      {
        subject: french.registryId,
        issuer: french.registryId,
        jwks: frenchJwks,
        delegation_chain: [root.registryId, sovereign.registryId, french.registryId],
        statements: [toSovereign, toFrench],
      },
      frenchKey,
    );
    const result = await verifyTrustBundle(frenchBundle, anchor);
    assert.equal(result.valid, false);
    assert.deepEqual(codes(result), ['CONSTRAINT_JURISDICTION']);
  });

  test('a root key rotated away verifies nothing after its not_after, and fresh chains carry the new key', async () => {
    const issuedBefore = await orgBundle();
    const oldKid = kidOf(statementsOf(issuedBefore)[0]);
    const rotated = await postJson(`${root.url}/v1/trust/keys/rotate`, { retire_after_seconds: RETIRE_AFTER_SECONDS });
    assert.equal(rotated.status, 201, JSON.stringify(rotated.body));
    assert.equal(rotated.body.previous.key_id, oldKid);
    const newKid = rotated.body.key_id as string;
    const notAfter = rotated.body.previous.not_after as string;

    // The root publishes both keys; the old one with its not_after.
    const anchor = await fetchAnchor(root);
    assert.deepEqual(anchor.jwks.keys.map((key) => [key.kid, key.not_after]), [[oldKid, notAfter], [newKid, rotated.body.not_after]]);
    assert.deepEqual(verdict(await verifyTrustBundle(issuedBefore, anchor)), { valid: true, subject: orgTriageAgent, errors: [] }, 'signed before the rotation, still verifies');

    const late = new Date(Date.parse(notAfter) + SKEW_MS + 1000);
    const statementsLapse = Math.min(...statementsOf(issuedBefore).map((statement) => statementClaims(statement).exp)) * 1000 + SKEW_MS;
    assert.ok(late.getTime() < statementsLapse, 'precondition: at that time the old statements are still inside their lifetime');
    assert.deepEqual(codes(await verifyTrustBundle(issuedBefore, anchor, late)), ['KEY_EXPIRED']);

    // The sovereign renews its statement within a third of its lifetime, and the organisation its own after that.
    const fresh = await eventually(
      async () => {
        const bundle = await orgBundle();
        // Its OIDF chain too (rebuilt in the background once the organisation's grant changed).
        const chain = (bundle as { trust_chain?: string[] }).trust_chain ?? [];
        return kidOf(statementsOf(bundle)[0]) === newKid && (chain.length === 0 || kidOf(chain.at(-1) as string) === newKid) ? bundle : undefined;
      },
      'a bundle whose root statement is signed by the new key',
      2 * TTL_SECONDS * 1000,
      500,
    );
    assert.deepEqual(verdict(await verifyTrustBundle(fresh, anchor, new Date(), { online: {} })), { valid: true, subject: orgTriageAgent, errors: [] });
    assert.equal((await verifyTrustBundle(fresh, anchor, late)).valid, true, 'what the new key signed is unaffected by the old key’s not_after');
  });

  test('federated discovery at the root returns the organisation’s agents merged by score, and survives the organisation being down', async () => {
    const discover = async (registry: { url: string }, capability: string) => {
      const response = await getJson(`${registry.url}/v1/discover?capability=${capability}&federated=true`);
      assert.equal(response.status, 200, JSON.stringify(response.body));
      return response.body;
    };
    const origins = (answer: any) => answer.results.map((result: { agent_id: string; registry_id: string }) => [result.agent_id, result.registry_id]);

    const triage = await discover(root, 'triage.assess');
    assert.deepEqual(
      new Map(origins(triage)),
      new Map([
        [sovereignAgent, sovereign.registryId],
        [orgTriageAgent, org.registryId],
      ]),
      JSON.stringify(triage.federation),
    );
    const scores = triage.results.map((result: { score: number }) => result.score);
    assert.deepEqual(scores, [...scores].sort((a, b) => b - a), 'merged by score');
    assert.deepEqual(triage.federation, { partial: false, children: [{ registry_id: sovereign.registryId, status: 'ok', result_count: 2 }] });
    assert.deepEqual(origins(await discover(root, 'consent.verify')), [[orgConsentAgent, org.registryId]]);

    await stopRegistryProcess(org.process, 'SIGKILL');
    const down = await discover(root, 'triage.assess');
    assert.deepEqual(origins(down), [[sovereignAgent, sovereign.registryId]]);
    assert.deepEqual(down.federation, { partial: true, children: [{ registry_id: sovereign.registryId, status: 'ok', result_count: 1, partial: true }] });
    const atSovereign = await discover(sovereign, 'triage.assess');
    assert.deepEqual(origins(atSovereign), [[sovereignAgent, sovereign.registryId]]);
    assert.equal(atSovereign.federation.partial, true);
    assert.deepEqual(
      atSovereign.federation.children.map((child: { registry_id: string; status: string }) => [child.registry_id, child.status]),
      [[org.registryId, 'unreachable']],
    );

    // Back on the same port and database, it is found again.
    const restarted = await startExtraRegistry({
      tier: 'organisational',
      name: org.name,
      jurisdiction: org.jurisdiction,
      dataDir: dataDirOf(org),
      port: Number(new URL(org.url).port),
      parentUrl: sovereign.url,
      env: FEDERATION_ENV,
    });
    assert.equal(restarted.url, org.url);
    const back = await discover(root, 'triage.assess');
    assert.equal(back.federation.partial, false);
    assert.ok(origins(back).some(([agent]: [string]) => agent === orgTriageAgent));
  });

  test('revoking the organisation: its chain fails online, the revocation is recorded, and its agents leave federated discovery', async () => {
    const anchor = await fetchAnchor(root);
    const issuedBefore = await orgBundle();
    assert.equal((await verifyTrustBundle(issuedBefore, anchor, new Date(), { online: {} })).valid, true, 'precondition: valid online before the revocation');

    const revoked = await postJson(`${sovereign.url}/v1/registries/${encodeURIComponent(org.registryId)}/revoke`, { reason: 'contract ended' });
    assert.equal(revoked.status, 200, JSON.stringify(revoked.body));

    const online = await verifyTrustBundle(issuedBefore, anchor, new Date(), { online: {} });
    assert.equal(online.valid, false);
    assert.deepEqual(codes(online), ['STATEMENT_REVOKED']);
    // Offline the copy holds until its short-lived statements lapse (the "expired statement" test).
    assert.equal((await verifyTrustBundle(issuedBefore, anchor)).valid, true);

    const record = await getJson(`${sovereign.url}/v1/registries/${encodeURIComponent(org.registryId)}`);
    assert.equal(record.body.status, 'revoked');
    assert.equal(record.body.revocation_reason, 'contract ended');
    const { tree_size: treeSize } = (await getJson(`${sovereign.url}/v1/transparency/sth`)).body;
    const latest = await getJson(`${sovereign.url}/v1/transparency/entries?start=${Math.max(0, treeSize - 100)}&limit=100`);
    const leaves = latest.body.entries.map((entry: { leaf: string }) => JSON.parse(entry.leaf));
    const revocation = leaves.findLast((leaf: { type: string }) => leaf.type === 'registry.revoked');
    assert.equal(revocation?.subject, org.registryId, 'the revocation is an event in the sovereign’s transparency ledger');
    // The ledger commits to the reason by its digest (free text never enters it: docs/transparency.md).
    assert.equal(revocation?.data.reason, `sha256:${createHash('sha256').update('contract ended').digest('hex')}`);

    const discovered = await getJson(`${root.url}/v1/discover?capability=triage.assess&federated=true`);
    assert.deepEqual(
      discovered.body.results.map((result: { agent_id: string }) => result.agent_id),
      [sovereignAgent],
      JSON.stringify(discovered.body.federation),
    );
    assert.deepEqual(discovered.body.federation, { partial: false, children: [{ registry_id: sovereign.registryId, status: 'ok', result_count: 1 }] });

    // The organisation learns of it at its next fetch (within a third of the 60 s lifetime) and from
    // then on gives no routing advice and no bundles: they would claim a chain that no longer stands.
    const refused = await eventually(
      async () => {
        const answer = await postJson(`${org.url}/v1/route`, { target: orgTriageAgent });
        return answer.status === 403 ? answer : undefined;
      },
      'the organisation to learn of its revocation',
      60_000,
      500,
    );
    assert.equal(refused.body.error.code, 'REGISTRY_REVOKED');
    assert.equal(refused.body.error.details.reason, 'contract ended');
    const bundle = await getJson(`${org.url}/v1/trust/bundle?subject=${encodeURIComponent(orgTriageAgent)}`);
    assert.equal(bundle.status, 403);
    assert.equal(bundle.body.error.code, 'REGISTRY_REVOKED');
  });
});

/** The outcome without the steps that explain it. */
function verdict({ steps: _steps, ...rest }: BundleVerification) {
  return rest;
}
