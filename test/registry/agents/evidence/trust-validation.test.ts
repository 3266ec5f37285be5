import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { generateKeyPairSync } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { CompactSign } from 'jose';
import {
  TRUST_LEVELS,
  validateTrustMaterial,
  type TrustValidationInput,
  type TrustValidationResult,
} from '../../../../src/registry/agents/evidence/trust-validation.ts';
import {
  NOW,
  NOW_SECONDS,
  daysFromNow,
  makeCertificate,
  makeKeyPair,
  signJws,
  signJwt,
  unsecuredJws,
  type CertificateFixture,
  type KeyPair,
} from './fixtures.ts';

const AGENT = {
  agent_id: 'agt_01JTRIAGE',
  display_name: 'Triage Helper',
  jurisdiction: 'GB',
  org_id: 'org_nhs_1',
};
const REGISTRY_ISS = 'https://ward.example';

let validCert: CertificateFixture;
let otherCert: CertificateFixture;
let expiredCert: CertificateFixture;
let futureCert: CertificateFixture;
let ed25519Cert: CertificateFixture;
let recordKey: KeyPair;
let registryKey: KeyPair;
let issuerKey: KeyPair;
let strangerKey: KeyPair;

before(() => {
  validCert = makeCertificate();
  otherCert = makeCertificate({ commonName: 'another-agent' });
  expiredCert = makeCertificate({
    notBefore: new Date('2020-01-01T00:00:00Z'),
    notAfter: new Date('2021-01-01T00:00:00Z'),
  });
  futureCert = makeCertificate({ notBefore: daysFromNow(30), notAfter: daysFromNow(400) });
  ed25519Cert = makeCertificate({ keyType: 'ed25519' });
  recordKey = makeKeyPair('rsa');
  registryKey = makeKeyPair('ec-p384');
  issuerKey = makeKeyPair('ec-p256');
  strangerKey = makeKeyPair('ec-p256');
});

function input(
  trust: Partial<TrustValidationInput['trust']>,
  overrides: Partial<TrustValidationInput> = {},
): TrustValidationInput {
  return {
    trust: { certificates: [], signatures: [], attestations: [], ...trust },
    binding: AGENT,
    knownIssuers: [{ iss: REGISTRY_ISS, jwks: { keys: [{ ...issuerKey.publicJwk, kid: 'ward-1' }] } }],
    registryJwks: { keys: [{ ...registryKey.publicJwk, kid: 'owner-registry-1' }] },
    now: NOW,
    ...overrides,
  };
}

function assertValidated(result: TrustValidationResult, level: 0 | 1 | 2 | 3): void {
  assert.deepEqual(result.errors, []);
  assert.equal(result.state, 'validated');
  assert.equal(result.level, level);
}

function assertFailedWith(result: TrustValidationResult, pointer: string, codes: readonly string[]): void {
  assert.equal(result.state, 'failed');
  assert.equal(result.level, 0);
  assert.equal(result.errors.length, 1, JSON.stringify(result.errors));
  const [error] = result.errors;
  assert.ok(error);
  assert.equal(error.pointer, pointer);
  assert.ok(codes.includes(error.code), `expected one of ${codes.join(', ')}, got ${error.code}`);
}

/** Claims that bind a signature to AGENT. */
const boundClaims = {
  sub: AGENT.agent_id,
  display_name: AGENT.display_name,
  jurisdiction: AGENT.jurisdiction,
  org_id: AGENT.org_id,
};

describe('validateTrustMaterial', () => {
  describe('levels', () => {
    it('validates empty trust material at level 0', async () => {
      assertValidated(await validateTrustMaterial(input({})), 0);
    });

    it('keeps a record with only a public jwks at level 0', async () => {
      assertValidated(
        await validateTrustMaterial(input({ jwks: { keys: [{ ...recordKey.publicJwk, kid: 'k1' }] } })),
        0,
      );
    });

    it('documents a meaning for every level', () => {
      assert.deepEqual(Object.keys(TRUST_LEVELS), ['0', '1', '2', '3']);
    });
  });

  describe('certificates', () => {
    it('reaches level 1 with a valid PEM certificate', async () => {
      assertValidated(await validateTrustMaterial(input({ certificates: [validCert.pem] })), 1);
    });

    it('reaches level 1 with a valid base64 DER certificate as in x5c', async () => {
      assertValidated(await validateTrustMaterial(input({ certificates: [validCert.derBase64] })), 1);
    });

    it('fails an expired certificate with CERT_EXPIRED', async () => {
      assertFailedWith(
        await validateTrustMaterial(input({ certificates: [expiredCert.pem] })),
        '/trust/certificates/0',
        ['CERT_EXPIRED'],
      );
    });

    it('fails a certificate that is not valid yet with CERT_NOT_YET_VALID', async () => {
      assertFailedWith(
        await validateTrustMaterial(input({ certificates: [futureCert.pem] })),
        '/trust/certificates/0',
        ['CERT_NOT_YET_VALID'],
      );
    });

    it('fails a garbage certificate with CERT_UNPARSEABLE and does not echo it', async () => {
      const garbage = '-----BEGIN CERTIFICATE-----\nTUFSS0VSLW5vdC1hLWNlcnQ=\n-----END CERTIFICATE-----';
      const result = await validateTrustMaterial(
        input({ certificates: [garbage, 'MARKER not base64 at all'] }),
      );
      assert.equal(result.state, 'failed');
      assert.deepEqual(
        result.errors.map((error) => [error.code, error.pointer]),
        [
          ['CERT_UNPARSEABLE', '/trust/certificates/0'],
          ['CERT_UNPARSEABLE', '/trust/certificates/1'],
        ],
      );
      for (const error of result.errors) assert.ok(!error.message.includes('MARKER'));
    });

    it('refuses a PEM bundle of two certificates in one element', async () => {
      assertFailedWith(
        await validateTrustMaterial(input({ certificates: [`${validCert.pem}${otherCert.pem}`] })),
        '/trust/certificates/0',
        ['CERT_UNPARSEABLE'],
      );
    });

    it('refuses DER with trailing bytes after the certificate', async () => {
      const padded = Buffer.concat([
        Buffer.from(validCert.derBase64, 'base64'),
        Buffer.from('extra'),
      ]).toString('base64');
      assertFailedWith(
        await validateTrustMaterial(input({ certificates: [padded] })),
        '/trust/certificates/0',
        ['CERT_UNPARSEABLE'],
      );
    });
  });

  describe('signatures', () => {
    it('reaches level 2 with a signature by the certificate key selected by x5t#S256', async () => {
      const jws = await signJws(boundClaims, validCert.privateKey, {
        alg: 'ES256',
        'x5t#S256': validCert.thumbprint,
      });
      assertValidated(
        await validateTrustMaterial(
          input({ certificates: [otherCert.pem, validCert.pem], signatures: [jws] }),
        ),
        2,
      );
    });

    it('reaches level 2 by trying each fitting certificate when the header names none', async () => {
      const jws = await signJws(boundClaims, ed25519Cert.privateKey, { alg: 'EdDSA' });
      assertValidated(
        await validateTrustMaterial(
          input({ certificates: [validCert.pem, ed25519Cert.derBase64], signatures: [jws] }),
        ),
        2,
      );
    });

    it('reaches level 2 with a signature by a jwks key selected by kid', async () => {
      const decoy = makeKeyPair('rsa');
      const jws = await signJws(boundClaims, recordKey.privateKey, { alg: 'PS256', kid: 'k2' });
      const jwks = {
        keys: [
          { ...decoy.publicJwk, kid: 'k1' },
          { ...recordKey.publicJwk, kid: 'k2' },
        ],
      };
      assertValidated(await validateTrustMaterial(input({ jwks, signatures: [jws] })), 2);
    });

    it("reaches level 2 with a signature by a key the owner's registry publishes", async () => {
      const jws = await signJws(boundClaims, registryKey.privateKey, {
        alg: 'ES384',
        kid: 'owner-registry-1',
      });
      assertValidated(await validateTrustMaterial(input({ signatures: [jws] })), 2);
    });

    it('accepts a signature without sub on first registration when the record has no agent id yet', async () => {
      const { sub: _sub, ...claims } = boundClaims;
      const jws = await signJws(claims, validCert.privateKey, { alg: 'ES256' });
      const result = await validateTrustMaterial(
        input(
          { certificates: [validCert.pem], signatures: [jws] },
          { binding: { ...AGENT, agent_id: undefined } },
        ),
      );
      assertValidated(result, 2);
    });

    it('fails a signature by an unrelated key', async () => {
      const jws = await signJws(boundClaims, strangerKey.privateKey, { alg: 'ES256' });
      assertFailedWith(
        await validateTrustMaterial(input({ certificates: [validCert.pem], signatures: [jws] })),
        '/trust/signatures/0',
        ['SIGNATURE_INVALID', 'SIGNATURE_KEY_UNKNOWN'],
      );
    });

    it('fails a signature whose kid names no published key with SIGNATURE_KEY_UNKNOWN', async () => {
      const jws = await signJws(boundClaims, recordKey.privateKey, { alg: 'PS256', kid: 'missing' });
      const jwks = { keys: [{ ...recordKey.publicJwk, kid: 'k1' }] };
      assertFailedWith(
        await validateTrustMaterial(input({ jwks, signatures: [jws] })),
        '/trust/signatures/0',
        ['SIGNATURE_KEY_UNKNOWN'],
      );
    });

    it('rejects alg none with SIGNATURE_ALG_FORBIDDEN', async () => {
      assertFailedWith(
        await validateTrustMaterial(
          input({ certificates: [validCert.pem], signatures: [unsecuredJws(boundClaims)] }),
        ),
        '/trust/signatures/0',
        ['SIGNATURE_ALG_FORBIDDEN'],
      );
    });

    it('rejects HS256 with SIGNATURE_ALG_FORBIDDEN', async () => {
      const jws = await signJws(boundClaims, new TextEncoder().encode('a shared secret of thirty-two b!'), {
        alg: 'HS256',
      });
      assertFailedWith(await validateTrustMaterial(input({ signatures: [jws] })), '/trust/signatures/0', [
        'SIGNATURE_ALG_FORBIDDEN',
      ]);
    });

    it('does not trust or fetch a jku header pointing at the signer’s own key', async () => {
      const originalFetch = globalThis.fetch;
      let fetched = false;
      globalThis.fetch = async () => {
        fetched = true;
        throw new Error('no network in tests');
      };
      try {
        const jws = await signJws(boundClaims, strangerKey.privateKey, {
          alg: 'ES256',
          kid: 'attacker-1',
          jku: 'https://attacker.example/.well-known/jwks.json',
        });
        assertFailedWith(await validateTrustMaterial(input({ signatures: [jws] })), '/trust/signatures/0', [
          'SIGNATURE_KEY_UNKNOWN',
        ]);
        assert.equal(fetched, false);
      } finally {
        globalThis.fetch = originalFetch;
      }
    });

    it('does not trust a key embedded in the jwk header', async () => {
      const jws = await signJws(boundClaims, strangerKey.privateKey, {
        alg: 'ES256',
        jwk: strangerKey.publicJwk,
      });
      const result = await validateTrustMaterial(input({ signatures: [jws] }));
      assertFailedWith(result, '/trust/signatures/0', ['SIGNATURE_KEY_UNKNOWN']);
      assert.match(result.errors[0]?.message ?? '', /header/);
    });

    it('does not trust an x5c header certificate the record does not carry', async () => {
      const jws = await signJws(boundClaims, otherCert.privateKey, {
        alg: 'ES256',
        x5c: [otherCert.derBase64],
      });
      assertFailedWith(
        await validateTrustMaterial(input({ certificates: [validCert.pem], signatures: [jws] })),
        '/trust/signatures/0',
        ['SIGNATURE_KEY_UNKNOWN'],
      );
    });

    it('accepts an x5c header whose first certificate is one of the record’s certificates', async () => {
      const jws = await signJws(boundClaims, validCert.privateKey, {
        alg: 'ES256',
        x5c: [validCert.derBase64],
      });
      assertValidated(
        await validateTrustMaterial(input({ certificates: [validCert.pem], signatures: [jws] })),
        2,
      );
    });

    it('fails a signature copied from another agent with SIGNATURE_BINDING_MISMATCH', async () => {
      // The copier takes agent A's certificate and signature wholesale; only the binding gives it away.
      const agentA = {
        sub: 'agt_01OTHER',
        display_name: 'Other Agent',
        jurisdiction: 'GB',
        org_id: 'org_other',
      };
      const jws = await signJws(agentA, validCert.privateKey, { alg: 'ES256' });
      assertFailedWith(
        await validateTrustMaterial(input({ certificates: [validCert.pem], signatures: [jws] })),
        '/trust/signatures/0',
        ['SIGNATURE_BINDING_MISMATCH'],
      );
    });

    it('fails a signature whose exp passed more than 60 seconds ago with SIGNATURE_EXPIRED', async () => {
      const stale = await signJws({ ...boundClaims, exp: NOW_SECONDS - 61 }, validCert.privateKey, {
        alg: 'ES256',
      });
      const withinSkew = await signJws({ ...boundClaims, exp: NOW_SECONDS - 30 }, validCert.privateKey, {
        alg: 'ES256',
      });
      const result = await validateTrustMaterial(
        input({ certificates: [validCert.pem], signatures: [withinSkew, stale] }),
      );
      assertFailedWith(result, '/trust/signatures/1', ['SIGNATURE_EXPIRED']);
    });

    it('fails a payload that is not JSON with SIGNATURE_MALFORMED', async () => {
      const jws = await new CompactSign(new TextEncoder().encode('plain text'))
        .setProtectedHeader({ alg: 'ES256' })
        .sign(validCert.privateKey);
      assertFailedWith(
        await validateTrustMaterial(input({ certificates: [validCert.pem], signatures: [jws] })),
        '/trust/signatures/0',
        ['SIGNATURE_MALFORMED'],
      );
    });
  });

  describe('attestations', () => {
    const claims = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
      iss: REGISTRY_ISS,
      sub: AGENT.agent_id,
      iat: NOW_SECONDS - 3600,
      exp: NOW_SECONDS + 3600,
      ...extra,
    });

    it('reaches level 3 with an attestation from a known issuer', async () => {
      const jwt = await signJwt(claims(), issuerKey.privateKey, { alg: 'ES256', kid: 'ward-1' });
      assertValidated(await validateTrustMaterial(input({ attestations: [jwt] })), 3);
    });

    it('fails an attestation from an unknown issuer with ATTESTATION_ISSUER_UNKNOWN', async () => {
      const jwt = await signJwt(claims({ iss: 'https://stranger.example' }), strangerKey.privateKey, {
        alg: 'ES256',
      });
      assertFailedWith(await validateTrustMaterial(input({ attestations: [jwt] })), '/trust/attestations/0', [
        'ATTESTATION_ISSUER_UNKNOWN',
      ]);
    });

    it('fails an expired attestation with ATTESTATION_EXPIRED', async () => {
      const jwt = await signJwt(
        claims({ iat: NOW_SECONDS - 7200, exp: NOW_SECONDS - 3600 }),
        issuerKey.privateKey,
        {
          alg: 'ES256',
          kid: 'ward-1',
        },
      );
      assertFailedWith(await validateTrustMaterial(input({ attestations: [jwt] })), '/trust/attestations/0', [
        'ATTESTATION_EXPIRED',
      ]);
    });

    it('fails an attestation naming a known issuer but signed with another key with ATTESTATION_INVALID', async () => {
      const jwt = await signJwt(claims(), strangerKey.privateKey, { alg: 'ES256', kid: 'ward-1' });
      assertFailedWith(await validateTrustMaterial(input({ attestations: [jwt] })), '/trust/attestations/0', [
        'ATTESTATION_INVALID',
      ]);
    });

    it("does not let the record's own keys stand in for the issuer's", async () => {
      const jwt = await signJwt(claims(), recordKey.privateKey, { alg: 'PS256' });
      const jwks = { keys: [recordKey.publicJwk] };
      assertFailedWith(
        await validateTrustMaterial(input({ jwks, attestations: [jwt] })),
        '/trust/attestations/0',
        ['ATTESTATION_INVALID'],
      );
    });

    it('fails an attestation about another agent with ATTESTATION_INVALID', async () => {
      const jwt = await signJwt(claims({ sub: 'agt_01OTHER' }), issuerKey.privateKey, {
        alg: 'ES256',
        kid: 'ward-1',
      });
      assertFailedWith(await validateTrustMaterial(input({ attestations: [jwt] })), '/trust/attestations/0', [
        'ATTESTATION_INVALID',
      ]);
    });
  });

  describe('jwks', () => {
    it('fails a private JWK with JWKS_PRIVATE_KEY', async () => {
      const privateJwk = { ...recordKey.privateKey.export({ format: 'jwk' }), kid: 'oops' };
      assertFailedWith(
        await validateTrustMaterial(input({ jwks: { keys: [privateJwk] } })),
        '/trust/jwks/keys/0',
        ['JWKS_PRIVATE_KEY'],
      );
    });

    it('fails a symmetric JWK with JWKS_PRIVATE_KEY', async () => {
      const secret = { kty: 'oct', k: Buffer.from('a shared secret').toString('base64url') };
      assertFailedWith(
        await validateTrustMaterial(input({ jwks: { keys: [secret] } })),
        '/trust/jwks/keys/0',
        ['JWKS_PRIVATE_KEY'],
      );
    });

    it('fails a JWK that does not import with JWKS_INVALID_KEY', async () => {
      const broken = { kty: 'EC', crv: 'P-256', x: 'AAAA', y: 'AAAA' };
      assertFailedWith(
        await validateTrustMaterial(input({ jwks: { keys: [broken] } })),
        '/trust/jwks/keys/0',
        ['JWKS_INVALID_KEY'],
      );
    });
    it('fails an RSA JWK below 2048 bits with JWKS_INVALID_KEY', async () => {
      const weak = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'jwk' });
      assertFailedWith(
        await validateTrustMaterial(input({ jwks: { keys: [{ ...weak }] } })),
        '/trust/jwks/keys/0',
        ['JWKS_INVALID_KEY'],
      );
    });
  });

  describe('mixed and bounded input', () => {
    it('fails one good and one bad element with exactly the bad one’s pointer', async () => {
      const good = await signJws(boundClaims, validCert.privateKey, { alg: 'ES256' });
      const bad = await signJws(boundClaims, strangerKey.privateKey, { alg: 'ES256' });
      const result = await validateTrustMaterial(
        input({ certificates: [validCert.pem], signatures: [good, bad] }),
      );
      assertFailedWith(result, '/trust/signatures/1', ['SIGNATURE_INVALID']);
    });

    it('reports 17 certificates as an error rather than crashing', async () => {
      const result = await validateTrustMaterial(
        input({ certificates: Array.from({ length: 17 }, () => validCert.pem) }),
      );
      assertFailedWith(result, '/trust/certificates', ['CERT_UNPARSEABLE']);
    });

    it('reports oversized elements and too many keys as errors rather than crashing', async () => {
      const huge = 'A'.repeat(1024 * 1024);
      const result = await validateTrustMaterial(
        input({
          certificates: [huge],
          signatures: [`${huge}.${huge}.${huge}`],
          attestations: [huge],
          jwks: { keys: Array.from({ length: 33 }, () => recordKey.publicJwk) },
        }),
      );
      assert.equal(result.state, 'failed');
      assert.deepEqual(
        result.errors.map((error) => [error.code, error.pointer]),
        [
          ['CERT_UNPARSEABLE', '/trust/certificates/0'],
          ['SIGNATURE_MALFORMED', '/trust/signatures/0'],
          ['ATTESTATION_MALFORMED', '/trust/attestations/0'],
          ['JWKS_INVALID_KEY', '/trust/jwks/keys'],
        ],
      );
    });

    it('validates material at every bound, with the worst case for key selection', async () => {
      // Worst case for key selection: no kid or thumbprint, so every fitting key is tried.
      const keys = Array.from({ length: 32 }, () => makeKeyPair('ec-p256'));
      const signer = keys[31];
      assert.ok(signer);
      const signatures = await Promise.all(
        Array.from({ length: 16 }, () => signJws(boundClaims, signer.privateKey, { alg: 'ES256' })),
      );
      const attestation = await signJwt(
        { iss: REGISTRY_ISS, iat: NOW_SECONDS, exp: NOW_SECONDS + 60 },
        issuerKey.privateKey,
        { alg: 'ES256' },
      );
      // Correctness only: speed is for benches, not for timed assertions in tests (a loaded machine
      // made this one fail at 1.1 s when it asserted under a second).
      const result = await validateTrustMaterial(
        input({
          certificates: Array.from({ length: 16 }, (_, index) =>
            index % 2 === 0 ? validCert.pem : otherCert.derBase64,
          ),
          signatures,
          attestations: Array.from({ length: 16 }, () => attestation),
          jwks: { keys: keys.map((pair) => pair.publicJwk) },
        }),
      );
      assertValidated(result, 3);
    });
  });

  describe('checked_at', () => {
    it('stamps checked_at as RFC 3339 UTC with milliseconds taken from now', async () => {
      const result = await validateTrustMaterial(input({}));
      assert.match(result.checked_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      assert.equal(result.checked_at, '2026-03-01T12:00:00.000Z');
    });

    it('stamps checked_at on failed results too', async () => {
      const result = await validateTrustMaterial(input({ certificates: ['nope'] }));
      assert.equal(result.state, 'failed');
      assert.equal(result.checked_at, NOW.toISOString());
    });
  });
});
