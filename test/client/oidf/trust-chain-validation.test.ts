// The trust-chain rules of OIDF §10.2 and §6 as the resolve endpoint applies them, on hand-made chains:
// leaf (https://leaf.example) → intermediate (https://int.example) → anchor (https://ta.example).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { OIDF_ENDPOINTS, type EntityStatementClaims } from '../../../src/contract/openid-federation.ts';
import { resolveMetadata } from '../../../src/client/oidf/metadata-policy.ts';
import { OidfError } from '../../../src/client/oidf/oidf-error.ts';
import { readEntityStatement, validateTrustChain } from '../../../src/client/oidf/trust-chain-validation.ts';
import { createTestSigner, type TestSigner } from '../../helpers/federation-chain.ts';

const LEAF = 'https://leaf.example';
const INT = 'https://int.example';
const TA = 'https://ta.example';
const NOW = new Date('2026-11-28T10:00:00Z');
const IAT = Math.floor(NOW.getTime() / 1000);

type Parties = { leaf: TestSigner; int: TestSigner; ta: TestSigner };

const jwks = (signer: TestSigner) => ({ keys: [signer.publicJwk] });
const sign = (signer: TestSigner, claims: Partial<EntityStatementClaims>, typ = 'entity-statement+jwt') =>
  signer.sign({ iat: IAT, exp: IAT + 600, ...claims }, typ);

/** A valid chain, each statement's claims changed by `change[j]` before signing. */
async function chain(parties: Parties, change: Array<Partial<EntityStatementClaims>> = []): Promise<string[]> {
  const { leaf, int, ta } = parties;
  return Promise.all([
    sign(leaf, { iss: LEAF, sub: LEAF, jwks: jwks(leaf), authority_hints: [INT], metadata: { ward_registry: { tier: 'organisational', jurisdiction: 'GB' } }, ...change[0] }),
    sign(int, { iss: INT, sub: LEAF, jwks: jwks(leaf), constraints: { max_path_length: 0 }, ...change[1] }),
    sign(ta, { iss: TA, sub: INT, jwks: jwks(int), constraints: { max_path_length: 1 }, ...change[2] }),
    sign(ta, { iss: TA, sub: TA, jwks: jwks(ta), ...change[3] }),
  ]);
}

async function parties(): Promise<Parties> {
  return { leaf: await createTestSigner(), int: await createTestSigner(), ta: await createTestSigner() };
}

async function refusal(promise: Promise<unknown>): Promise<OidfError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof OidfError) return error;
    throw error;
  }
  assert.fail('expected a refusal');
}

describe('trust chain validation (OIDF §10.2, §6.2)', () => {
  test('a sound chain validates; its exp is the earliest of its statements', async () => {
    const p = await parties();
    const valid = await validateTrustChain(await chain(p, [{}, { exp: IAT + 100 }]), TA, [p.ta.publicJwk], NOW);
    assert.equal(valid.statements.length, 4);
    assert.equal(valid.exp, IAT + 100);
  });

  test('each rule refuses its own breach as invalid_trust_chain', async () => {
    const p = await parties();
    const stranger = await createTestSigner();
    // Thunks: a refusal must not settle before the test awaits it.
    const cases: Array<[string, () => Promise<unknown>, RegExp]> = [
      ['expired statement', async () => validateTrustChain(await chain(p, [{}, { exp: IAT - 120 }]), TA, undefined, NOW), /has expired/],
      ['issued in the future', async () => validateTrustChain(await chain(p, [{ iat: IAT + 600 }]), TA, undefined, NOW), /in the future/],
      ['leaf key the superior does not name', async () => validateTrustChain(await chain(p, [{}, { jwks: jwks(stranger) }]), TA, undefined, NOW), /as its superior states them/],
      ['anchor key not pinned', async () => validateTrustChain(await chain(p), TA, [stranger.publicJwk], NOW), /the trust anchor/],
      ['statement by the wrong issuer', async () => validateTrustChain(await chain(p, [{}, { iss: 'https://other.example' }]), TA, undefined, NOW), /not followed by a statement about its issuer/],
      ['superior not in authority_hints', async () => validateTrustChain(await chain(p, [{ authority_hints: ['https://other.example'] }]), TA, undefined, NOW), /authority_hints/],
      ['path too long', async () => validateTrustChain(await chain(p, [{}, {}, { constraints: { max_path_length: 0 } }]), TA, undefined, NOW), /allows 0 intermediate/],
      ['excluded name', async () => validateTrustChain(await chain(p, [{}, {}, { constraints: { naming_constraints: { excluded: ['.leaf.example', 'leaf.example'] } } }]), TA, undefined, NOW), /excludes/],
      ['unpermitted name', async () => validateTrustChain(await chain(p, [{}, {}, { constraints: { naming_constraints: { permitted: ['.nhs.uk'] } } }]), TA, undefined, NOW), /does not permit/],
      ['critical claim', async () => validateTrustChain(await chain(p, [{ crit: ['ward_extension'] }]), TA, undefined, NOW), /critical/],
      ['wrong anchor', async () => validateTrustChain(await chain(p), 'https://elsewhere.example', undefined, NOW), /not at the trust anchor/],
    ];
    for (const [what, promise, message] of cases) {
      const error = await refusal(promise());
      assert.equal(error.code, 'invalid_trust_chain', what);
      assert.match(error.message, message, what);
    }
    const wrongTyp = [await sign(p.leaf, { iss: LEAF, sub: LEAF, jwks: jwks(p.leaf) }, 'JWT'), ...(await chain(p)).slice(1)];
    assert.match((await refusal(validateTrustChain(wrongTyp, TA, undefined, NOW))).message, /not typed entity-statement\+jwt/);
  });
});

describe('entity statements of the wrong shape', () => {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const statement = (claims: Record<string, unknown>) =>
    `${encode({ typ: 'entity-statement+jwt', alg: 'ES256', kid: 'k1' })}.${encode({ iss: 'https://a.example', sub: 'https://a.example', iat: 1, exp: 2, jwks: { keys: [] }, ...claims })}.c2ln`;

  test('claims the checks read in another shape are invalid_trust_chain, never a TypeError', () => {
    const malformed: Array<Record<string, unknown>> = [
      { authority_hints: 'https://b.example' },
      { crit: 'exp' },
      { metadata: 'x' },
      { metadata: { federation_entity: 'x' } },
      { metadata_policy: { federation_entity: null } },
      { metadata_policy: { federation_entity: { organization_name: 'x' } } },
      { constraints: [] },
      { constraints: { naming_constraints: { permitted: '.example' } } },
    ];
    for (const claims of malformed) {
      assert.throws(() => readEntityStatement(statement(claims), 'the statement'), (error: unknown) => error instanceof OidfError && error.code === 'invalid_trust_chain', JSON.stringify(claims));
    }
    assert.equal(readEntityStatement(statement({ authority_hints: ['https://b.example'], metadata: { federation_entity: {} } }), 'the statement').sub, 'https://a.example');
  });
});

describe('resolved metadata (OIDF §6.1)', () => {
  const statements = (policies: Array<EntityStatementClaims['metadata_policy']>, superiorMetadata = {}, leafMetadata: Record<string, Record<string, unknown>> = { ward_registry: { tier: 'organisational', jurisdiction: 'GB' }, openid_provider: { issuer: LEAF } }) =>
    [
      { iss: LEAF, sub: LEAF, iat: IAT, exp: IAT, jwks: { keys: [] }, metadata: leafMetadata },
      { iss: INT, sub: LEAF, iat: IAT, exp: IAT, jwks: { keys: [] }, metadata: superiorMetadata, metadata_policy: policies[0], constraints: { allowed_entity_types: ['ward_registry'] } },
      { iss: TA, sub: INT, iat: IAT, exp: IAT, jwks: { keys: [] }, metadata_policy: policies[1] },
      { iss: TA, sub: TA, iat: IAT, exp: IAT, jwks: { keys: [] } },
    ] as EntityStatementClaims[];

  test('the superior’s metadata overrides, entity types outside allowed_entity_types go, policies apply down the chain', () => {
    const resolved = resolveMetadata(
      statements(
        [{ ward_registry: { tier: { one_of: ['organisational'] }, contacts: { add: ['ops@leeds.example'] } } }, { ward_registry: { jurisdiction: { one_of: ['GB'] }, contacts: { default: ['root@example'] } } }],
        { ward_registry: { registry_id: 'registry://gb/registries/leeds' } },
      ),
    );
    assert.deepEqual(resolved, { ward_registry: { tier: 'organisational', jurisdiction: 'GB', registry_id: 'registry://gb/registries/leeds', contacts: ['root@example', 'ops@leeds.example'] } });
  });

  test('a value a policy refuses, and two superiors fixing different values, are invalid_metadata', () => {
    const refused = () => resolveMetadata(statements([{ ward_registry: { jurisdiction: { one_of: ['FR'] } } }, {}]));
    assert.throws(refused, (error: unknown) => error instanceof OidfError && error.code === 'invalid_metadata');
    const conflicting = () => resolveMetadata(statements([{ ward_registry: { tier: { value: 'sovereign' } } }, { ward_registry: { tier: { value: 'organisational' } } }]));
    assert.throws(conflicting, /different values/);
  });
});

test('docs/federation.md names every OpenID Federation endpoint of the table in code', () => {
  const docs = readFileSync(new URL('../../../docs/federation.md', import.meta.url), 'utf8');
  for (const endpoint of OIDF_ENDPOINTS) {
    assert.ok(docs.includes(endpoint.path), endpoint.path);
    assert.ok(docs.includes(endpoint.member), endpoint.member);
  }
});
