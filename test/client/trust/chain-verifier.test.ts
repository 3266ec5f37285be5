import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { before, describe, test, type TestContext } from 'node:test';
import { agentUri, newUlid } from '../../../src/core/ids.ts';
import { DELEGATION_TYP, childConstraints } from '../../../src/contract/delegation-statement.ts';
import { CHAIN_VERIFICATION_CODES } from '../../../src/client/trust/chain-errors.ts';
import { verifyTrustBundle } from '../../../src/client/trust/bundle-verifier.ts';
import {
  ORG_URI,
  ROOT_URI,
  SOVEREIGN_URI,
  STATEMENT_TTL_SECONDS,
  buildChain,
  createTestSigner,
  delegate,
  party,
  signBundle,
  withStatement,
  type Chain,
} from '../../helpers/federation-chain.ts';

const codes = (result: { errors: Array<{ code: string }> }) => result.errors.map((e) => e.code);
const HOUR = 60 * 60 * 1000;
const iso = (ms: number) => new Date(ms).toISOString();

/** Decodes, edits and re-encodes a statement's payload while keeping its signature. */
function editPayload(token: string, edit: (claims: Record<string, any>) => void): string {
  const [header, payload, signature] = token.split('.') as [string, string, string];
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  edit(claims);
  return [header, Buffer.from(JSON.stringify(claims)).toString('base64url'), signature].join('.');
}

/** A local HTTP server that counts every request and answers with `body`. */
async function countingServer(t: TestContext, body: unknown): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  const server = createServer((_request, response) => {
    hits += 1;
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: () => hits };
}

describe('delegation chain verification (offline)', () => {
  const now = new Date();
  let chain: Chain;
  before(async () => {
    chain = await buildChain(now);
  });

  test('a chain root → sovereign → organisation verifies end to end with only the root anchor', async () => {
    const { steps, ...verdict } = await verifyTrustBundle(chain.bundle, chain.anchor, now);
    assert.deepEqual(verdict, { valid: true, subject: chain.bundle.subject, errors: [] });
    assert.deepEqual(
      steps.map((step) => [step.name, step.status]),
      [
        ['Trust anchor', 'passed'],
        ['Delegation chain', 'passed'],
        ...chain.bundle.statements.map((_: unknown, index: number) => [`Statement ${index + 1}: ${chain.bundle.delegation_chain[index]} → ${chain.bundle.delegation_chain[index + 1]}`, 'passed']),
        ['Subject constraints', 'passed'],
        ['Bundle signature', 'passed'],
      ],
      'every check is reported, in order, for a person to read',
    );
    // The anchor may also be the bare JWKS, without naming the root.
    assert.equal((await verifyTrustBundle(chain.bundle, { jwks: chain.anchor.jwks }, now)).valid, true);
  });

  test('a child named like an ancestor cannot speak as it: a registry appears once in a chain', async () => {
    // A sovereign delegates to an "organisation" under the root's own URI, then that one issues bundles as the root.
    const impostor = await party(ROOT_URI, 'organisational', 'ES256');
    const statement = await delegate(chain.sovereign, impostor, now);
    const asRoot = await signBundle(impostor, [ROOT_URI, SOVEREIGN_URI, ROOT_URI], [chain.statements[0] as string, statement], now);
    const result = await verifyTrustBundle(asRoot, chain.anchor, now);
    assert.equal(result.valid, false);
    assert.ok(codes(result).includes('CHAIN_MISMATCH'), JSON.stringify(result.errors));
    // Without registry_id in the anchor, the repeat alone is enough.
    assert.ok(codes(await verifyTrustBundle(asRoot, { jwks: chain.anchor.jwks }, now)).includes('CHAIN_MISMATCH'));
  });

  test('a bundle subject that is neither an agent nor a registry URI, or a bundle JWS of another typ, is malformed', async () => {
    const odd = await signBundle(chain.org, chain.bundle.delegation_chain, chain.statements, now, `${agentUri('FR', newUlid())}/`);
    assert.deepEqual(codes(await verifyTrustBundle(odd, chain.anchor, now)), ['BUNDLE_MALFORMED']);
    const { signed_bundle: _signed, ...fields } = chain.bundle;
    const otherTyp = { ...fields, signed_bundle: await chain.org.signer.sign(fields, 'JWT') };
    assert.deepEqual(codes(await verifyTrustBundle(otherTyp, chain.anchor, now)), ['BUNDLE_MALFORMED']);
  });

  test('a statement whose payload was changed after signing does not verify, and nothing below it is trusted', async () => {
    const attacker = await createTestSigner('ES256');
    const tampered = editPayload(chain.statements[1] as string, (claims) => (claims.jwks = attacker.jwks()));
    const bundle = await signBundle({ uri: ORG_URI, signer: attacker }, chain.bundle.delegation_chain, [chain.statements[0] as string, tampered], now);
    const result = await verifyTrustBundle(bundle, chain.anchor, now);
    assert.deepEqual(codes(result), ['STATEMENT_SIGNATURE_INVALID']);
    assert.deepEqual(
      result.steps.filter((step) => step.name.startsWith('Statement') || step.name === 'Bundle signature').map((step) => step.status),
      ['passed', 'failed', 'skipped'],
      'the step that failed is named, and what depended on it is shown as not checked',
    );
    const widened = editPayload(chain.statements[0] as string, (claims) => (claims.constraints.max_path_length = 5));
    assert.deepEqual(codes(await verifyTrustBundle(await withStatement(chain, 0, widened, now), chain.anchor, now)), ['STATEMENT_SIGNATURE_INVALID']);
  });

  test('a statement naming a key location (jku, x5u) is refused and the location is never fetched', async (t) => {
    const attacker = await createTestSigner('ES256');
    const keyServer = await countingServer(t, attacker.jwks());
    const statusServer = await countingServer(t, { status: 'active' });
    const claims = JSON.parse(Buffer.from((chain.statements[1] as string).split('.')[1] as string, 'base64url').toString('utf8'));
    for (const member of ['jku', 'x5u'] as const) {
      // The attacker signs with its own key and points the header at the JWKS it serves.
      const forged = await attacker.signWithHeader({ ...claims, jwks: attacker.jwks() }, { typ: DELEGATION_TYP, [member]: `${keyServer.url}/jwks.json` });
      const bundle = await signBundle({ uri: ORG_URI, signer: attacker }, chain.bundle.delegation_chain, [chain.statements[0] as string, forged], now);
      const offline = await verifyTrustBundle(bundle, chain.anchor, now);
      assert.deepEqual(codes(offline), ['KEY_URL_REFUSED', 'STATEMENT_KEY_UNKNOWN']);
      const online = await verifyTrustBundle(bundle, { ...chain.anchor, api_base_url: statusServer.url }, now, { online: { timeoutMs: 2000 } });
      assert.deepEqual(codes(online), ['KEY_URL_REFUSED', 'STATEMENT_KEY_UNKNOWN', 'STATUS_UNAVAILABLE']);
    }
    // Even the true parent's signature does not make a key-offering header acceptable.
    const honestButOffering = await chain.sovereign.signer.signWithHeader(claims, { typ: DELEGATION_TYP, jku: `${keyServer.url}/jwks.json` });
    assert.deepEqual(codes(await verifyTrustBundle(await withStatement(chain, 1, honestButOffering, now), chain.anchor, now)), ['KEY_URL_REFUSED']);
    assert.equal(keyServer.hits(), 0);
    assert.equal(statusServer.hits(), 2, 'online, only the root was asked, and only about the verified statement 0');
  });

  test('a statement from the wrong parent is refused: another key, a borrowed kid, or another issuer', async () => {
    const otherSovereign = await party('registry://gb/registries/other', 'sovereign', 'ES256');
    const foreignSigned = await delegate({ ...otherSovereign, uri: SOVEREIGN_URI }, chain.org, now);
    assert.deepEqual(codes(await verifyTrustBundle(await withStatement(chain, 1, foreignSigned, now), chain.anchor, now)), ['STATEMENT_KEY_UNKNOWN']);

    const impostor = { ...chain.sovereign, signer: await createTestSigner('EdDSA', {}, chain.sovereign.signer.kid) };
    const borrowedKid = await delegate(impostor, chain.org, now);
    assert.deepEqual(codes(await verifyTrustBundle(await withStatement(chain, 1, borrowedKid, now), chain.anchor, now)), ['STATEMENT_SIGNATURE_INVALID']);

    const wrongIssuer = await delegate(chain.sovereign, chain.org, now, { iss: otherSovereign.uri });
    assert.deepEqual(codes(await verifyTrustBundle(await withStatement(chain, 1, wrongIssuer, now), chain.anchor, now)), ['STATEMENT_WRONG_ISSUER']);

    const wrongSubject = await delegate(chain.sovereign, chain.org, now, { sub: 'registry://gb/registries/elsewhere' });
    assert.deepEqual(codes(await verifyTrustBundle(await withStatement(chain, 1, wrongSubject, now), chain.anchor, now)), ['CHAIN_MISMATCH']);
  });

  test('an expired or not-yet-valid statement is refused (60 s skew)', async () => {
    const shortLived = await delegate(chain.sovereign, chain.org, now, { ttlSeconds: 60 });
    const bundle = await withStatement(chain, 1, shortLived, now);
    assert.equal((await verifyTrustBundle(bundle, chain.anchor, new Date(now.getTime() + 110_000))).valid, true);
    assert.deepEqual(codes(await verifyTrustBundle(bundle, chain.anchor, new Date(now.getTime() + 130_000))), ['STATEMENT_EXPIRED']);
    const everyStatementExpired = new Date(now.getTime() + (STATEMENT_TTL_SECONDS + 120) * 1000);
    assert.deepEqual(codes(await verifyTrustBundle(chain.bundle, chain.anchor, everyStatementExpired)), ['STATEMENT_EXPIRED', 'STATEMENT_EXPIRED']);

    const future = await delegate(chain.sovereign, chain.org, new Date(now.getTime() + 10 * 60_000));
    assert.deepEqual(codes(await verifyTrustBundle(await withStatement(chain, 1, future, now), chain.anchor, now)), ['STATEMENT_NOT_YET_VALID']);
  });

  test('an anchor key verifies nothing after its not_after or before its not_before', async () => {
    const rotatedAway = { ...chain.root.signer.publicJwk, not_before: iso(now.getTime() - 48 * HOUR), not_after: iso(now.getTime() - HOUR) };
    assert.deepEqual(codes(await verifyTrustBundle(chain.bundle, { jwks: { keys: [rotatedAway] } }, now)), ['KEY_EXPIRED']);
    const notYet = { ...chain.root.signer.publicJwk, not_before: iso(now.getTime() + HOUR), not_after: null };
    assert.deepEqual(codes(await verifyTrustBundle(chain.bundle, { jwks: { keys: [notYet] } }, now)), ['KEY_NOT_YET_VALID']);
    // Inside its window (a retired key still published until not_after) it verifies.
    const retiring = { ...chain.root.signer.publicJwk, not_before: iso(now.getTime() - 48 * HOUR), not_after: iso(now.getTime() + HOUR) };
    assert.equal((await verifyTrustBundle(chain.bundle, { jwks: { keys: [retiring] } }, now)).valid, true);
  });

  test('a key rotated away in the middle of the chain verifies nothing after its not_after', async () => {
    const oldKey = await createTestSigner('EdDSA', { not_before: iso(now.getTime() - 48 * HOUR), not_after: iso(now.getTime() - HOUR) });
    const newKey = await createTestSigner('EdDSA', { not_before: iso(now.getTime() - HOUR), not_after: null });
    const sovereign = { ...chain.sovereign, signer: newKey };
    const rootStatement = await delegate(chain.root, sovereign, now, { jwks: { keys: [oldKey.publicJwk, newKey.publicJwk] } });
    const byOldKey = await delegate({ ...chain.sovereign, signer: oldKey }, chain.org, now);
    const stale = await signBundle(chain.org, chain.bundle.delegation_chain, [rootStatement, byOldKey], now);
    assert.deepEqual(codes(await verifyTrustBundle(stale, chain.anchor, now)), ['KEY_EXPIRED']);
    const byNewKey = await delegate(sovereign, chain.org, now);
    const fresh = await signBundle(chain.org, chain.bundle.delegation_chain, [rootStatement, byNewKey], now);
    assert.equal((await verifyTrustBundle(fresh, chain.anchor, now)).valid, true);
  });

  test('a child claiming a foreign jurisdiction is refused', async () => {
    const french = await party('registry://fr/registries/aphp', 'organisational', 'ES256');
    // The GB sovereign signs a statement for a French registry, even granting it FR itself.
    const statement = await delegate(chain.sovereign, french, now, { constraints: childConstraints('sovereign', 'FR') });
    const bundle = await signBundle(french, [ROOT_URI, SOVEREIGN_URI, french.uri], [chain.statements[0] as string, statement], now, agentUri('FR', newUlid()));
    const result = await verifyTrustBundle(bundle, chain.anchor, now);
    assert.deepEqual(codes(result), ['CONSTRAINT_JURISDICTION', 'CONSTRAINT_JURISDICTION']);
    assert.match(result.errors[0]?.message ?? '', /FR is outside what statement 0 allows/);
    assert.match(result.errors[1]?.message ?? '', /bundle subject/);

    // A GB-looking statement for a French registry URI is caught by the URI itself.
    const disguised = await delegate(chain.sovereign, { ...french, jurisdiction: 'GB' }, now, { constraints: childConstraints('sovereign', 'GB') });
    const disguisedBundle = await signBundle(french, [ROOT_URI, SOVEREIGN_URI, french.uri], [chain.statements[0] as string, disguised], now);
    assert.deepEqual(codes(await verifyTrustBundle(disguisedBundle, chain.anchor, now)), ['CONSTRAINT_JURISDICTION', 'CONSTRAINT_JURISDICTION', 'CONSTRAINT_JURISDICTION']);
  });

  test('a bundle about an agent of a foreign jurisdiction is refused', async () => {
    const bundle = await signBundle(chain.org, chain.bundle.delegation_chain, chain.statements, now, agentUri('FR', newUlid()));
    const result = await verifyTrustBundle(bundle, chain.anchor, now);
    assert.deepEqual(codes(result), ['CONSTRAINT_JURISDICTION', 'CONSTRAINT_JURISDICTION']);
    const registryBundle = await signBundle(chain.org, chain.bundle.delegation_chain, chain.statements, now, ORG_URI);
    assert.equal((await verifyTrustBundle(registryBundle, chain.anchor, now)).valid, true);
  });

  test('a statement below an organisational registry exceeds the path length', async () => {
    const extra = await party('registry://gb/registries/ward-7', 'organisational', 'ES256');
    const below = await delegate(chain.org, extra, now, { constraints: { max_path_length: 0, allowed_jurisdictions: ['GB'] } });
    const bundle = await signBundle(extra, [ROOT_URI, SOVEREIGN_URI, ORG_URI, extra.uri], [...chain.statements, below], now);
    const result = await verifyTrustBundle(bundle, chain.anchor, now);
    assert.deepEqual(codes(result), ['CONSTRAINT_TIER', 'CONSTRAINT_PATH_LENGTH', 'CONSTRAINT_PATH_LENGTH']);
  });

  test('tiers must descend root → sovereign → organisational', async () => {
    const asOrganisational = await delegate(chain.root, chain.sovereign, now, { tier: 'organisational' });
    const asSovereign = await delegate(chain.sovereign, chain.org, now, { tier: 'sovereign' });
    const swapped = await signBundle(chain.org, chain.bundle.delegation_chain, [asOrganisational, asSovereign], now);
    assert.deepEqual(codes(await verifyTrustBundle(swapped, chain.anchor, now)), ['CONSTRAINT_TIER']);
    const twoSovereigns = await signBundle(chain.org, chain.bundle.delegation_chain, [chain.statements[0] as string, asSovereign], now);
    assert.deepEqual(codes(await verifyTrustBundle(twoSovereigns, chain.anchor, now)), ['CONSTRAINT_TIER']);
  });

  test('private key material in a statement jwks makes it malformed', async () => {
    const leaky = await delegate(chain.sovereign, chain.org, now, {});
    const claims = JSON.parse(Buffer.from(leaky.split('.')[1] as string, 'base64url').toString('utf8'));
    const withPrivate = await chain.sovereign.signer.sign({ ...claims, jwks: { keys: [{ ...chain.org.signer.publicJwk, d: 'AAAA' }] } }, DELEGATION_TYP);
    const result = await verifyTrustBundle(await withStatement(chain, 1, withPrivate, now), chain.anchor, now);
    // The leaked key is not used either, so the issuer's bundle no longer has a key to verify with.
    assert.deepEqual(codes(result), ['STATEMENT_MALFORMED', 'BUNDLE_KEY_UNKNOWN']);
    await assert.rejects(delegate(chain.sovereign, chain.org, now, { jwks: { keys: [{ ...chain.org.signer.publicJwk, d: 'AAAA' }] } }));
  });

  test('a statement with a wrong typ, a forbidden alg or missing claims is refused', async () => {
    const claims = JSON.parse(Buffer.from((chain.statements[1] as string).split('.')[1] as string, 'base64url').toString('utf8'));
    const wrongTyp = await chain.sovereign.signer.sign(claims, 'JWT');
    assert.deepEqual(codes(await verifyTrustBundle(await withStatement(chain, 1, wrongTyp, now), chain.anchor, now)), ['STATEMENT_MALFORMED']);
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', kid: chain.sovereign.signer.kid, typ: DELEGATION_TYP })).toString('base64url')}.${(chain.statements[1] as string).split('.')[1]}.`;
    assert.deepEqual(codes(await verifyTrustBundle(await withStatement(chain, 1, unsigned, now), chain.anchor, now)), ['STATEMENT_SIGNATURE_INVALID']);
    const { constraints: _dropped, ...unconstrained } = claims;
    const noConstraints = await chain.sovereign.signer.sign(unconstrained, DELEGATION_TYP);
    assert.deepEqual(codes(await verifyTrustBundle(await withStatement(chain, 1, noConstraints, now), chain.anchor, now)), ['STATEMENT_MALFORMED']);
    assert.deepEqual(codes(await verifyTrustBundle(await withStatement(chain, 1, 'not-a-jws', now), chain.anchor, now)), ['STATEMENT_MALFORMED']);
  });

  test('the chain must run from the anchor to the issuer with one statement per link', async () => {
    const missing = await signBundle(chain.org, chain.bundle.delegation_chain, [chain.statements[0] as string], now);
    assert.deepEqual(codes(await verifyTrustBundle(missing, chain.anchor, now)), ['CHAIN_MISMATCH', 'BUNDLE_KEY_UNKNOWN']);
    assert.deepEqual(codes(await verifyTrustBundle(chain.bundle, { ...chain.anchor, registry_id: 'registry://fr/registries/root' }, now)), ['CHAIN_MISMATCH']);
    const otherRoot = await createTestSigner('ES256');
    assert.deepEqual(codes(await verifyTrustBundle(chain.bundle, { jwks: otherRoot.jwks() }, now)), ['STATEMENT_KEY_UNKNOWN']);
  });

  test('the bundle itself must be signed by the issuer, without a key-offering header', async () => {
    const bySovereign = await signBundle({ uri: ORG_URI, signer: chain.sovereign.signer }, chain.bundle.delegation_chain, chain.statements, now);
    assert.deepEqual(codes(await verifyTrustBundle(bySovereign, chain.anchor, now)), ['BUNDLE_KEY_UNKNOWN']);
    const { signed_bundle: _signature, ...fields } = chain.bundle;
    const offering = await chain.org.signer.signWithHeader(fields, { typ: 'ward-trust-bundle+jwt', x5u: 'https://attacker.example/cert.pem' });
    assert.deepEqual(codes(await verifyTrustBundle({ ...fields, signed_bundle: offering }, chain.anchor, now)), ['KEY_URL_REFUSED']);
    assert.deepEqual(codes(await verifyTrustBundle({ ...chain.bundle, trust_level: 4 }, chain.anchor, now)), ['BUNDLE_TAMPERED']);
    assert.deepEqual(codes(await verifyTrustBundle(chain.bundle, chain.anchor, new Date(now.getTime() - 120_000))), ['STATEMENT_NOT_YET_VALID', 'STATEMENT_NOT_YET_VALID', 'BUNDLE_NOT_YET_VALID']);
  });

  test('every verification code is explained in docs/federation.md', () => {
    const docs = readFileSync(new URL('../../../docs/federation.md', import.meta.url), 'utf8');
    const section = docs.slice(docs.indexOf('## Verifying a chain'));
    assert.ok(section.length > 0 && docs.includes('## Verifying a chain'));
    for (const code of CHAIN_VERIFICATION_CODES) assert.match(section, new RegExp(`\`${code}\``), `${code} is documented`);
  });
});

describe('delegation statements', () => {
  test('childConstraints: a sovereign may delegate once more, an organisational registry not at all', () => {
    assert.deepEqual(childConstraints('root', 'gb'), { max_path_length: 1, allowed_jurisdictions: ['GB'] });
    assert.deepEqual(childConstraints('sovereign', 'GB'), { max_path_length: 0, allowed_jurisdictions: ['GB'] });
    assert.throws(() => childConstraints('organisational', 'GB'));
    assert.throws(() => childConstraints('root', 'UK'));
  });

  test('a statement carries iat = nbf, exp = iat + ttl and a ULID jti', async () => {
    const now = new Date('2026-11-22T10:00:00.000Z');
    const root = await party(ROOT_URI, 'root');
    const sovereign = await party(SOVEREIGN_URI, 'sovereign');
    const token = await delegate(root, sovereign, now, { ttlSeconds: 900 });
    const header = JSON.parse(Buffer.from(token.split('.')[0] as string, 'base64url').toString('utf8'));
    const claims = JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString('utf8'));
    assert.deepEqual(header, { alg: 'ES256', kid: root.signer.kid, typ: DELEGATION_TYP });
    assert.equal(claims.iat, Date.parse('2026-11-22T10:00:00.000Z') / 1000);
    assert.equal(claims.nbf, claims.iat);
    assert.equal(claims.exp, claims.iat + 900);
    assert.match(claims.jti, /^[0-9A-HJKMNP-TV-Z]{26}$/);
    assert.deepEqual(
      Object.keys(claims).sort(),
      ['api_base_url', 'constraints', 'exp', 'iat', 'iss', 'jti', 'jurisdiction', 'jwks', 'nbf', 'sub', 'tier'],
    );
  });
});
