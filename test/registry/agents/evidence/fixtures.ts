// Real keys, certificates and JWS for the trust-validation tests. Certificates come from the openssl
// CLI (`openssl ca -selfsign` takes arbitrary start and end dates, so expired and not-yet-valid
// certificates need no clock faking); keys from node:crypto; JWS and JWT from jose.
import { Buffer } from 'node:buffer';
import { execFileSync } from 'node:child_process';
import { X509Certificate, createHash, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompactSign, SignJWT, type JWTPayload } from 'jose';
import { OPENSSL_CA_CONFIG, opensslTime } from '../../../helpers/openssl-ca.ts';

/** The instant every test judges validity at. */
export const NOW = new Date('2026-03-01T12:00:00.000Z');

/** NOW in JWT NumericDate seconds. */
export const NOW_SECONDS = Math.floor(NOW.getTime() / 1000);

const DAY_MS = 24 * 60 * 60 * 1000;

/** A date `days` days from NOW (negative for the past). */
export function daysFromNow(days: number): Date {
  return new Date(NOW.getTime() + days * DAY_MS);
}

/** Key types the fixtures can make. */
export type KeyType = 'ec-p256' | 'ec-p384' | 'rsa' | 'ed25519';

/** A generated key pair with its public JWK. */
export type KeyPair = { privateKey: KeyObject; publicKey: KeyObject; publicJwk: Record<string, unknown> };

/** Generates a fresh key pair. */
export function makeKeyPair(type: KeyType = 'ec-p256'): KeyPair {
  const { privateKey, publicKey } =
    type === 'rsa'
      ? generateKeyPairSync('rsa', { modulusLength: 2048 })
      : type === 'ed25519'
        ? generateKeyPairSync('ed25519')
        : generateKeyPairSync('ec', { namedCurve: type === 'ec-p256' ? 'P-256' : 'P-384' });
  return { privateKey, publicKey, publicJwk: { ...publicKey.export({ format: 'jwk' }) } };
}

/** A certificate in both accepted encodings, with the key that signs for it. */
export type CertificateFixture = KeyPair & {
  pem: string;
  /** Standard base64 DER, as in JWK `x5c`. */
  derBase64: string;
  /** base64url SHA-256 of the DER, as in JWS `x5t#S256`. */
  thumbprint: string;
};



/** Makes a self-signed certificate valid from `notBefore` to `notAfter`. */
export function makeCertificate(
  options: { keyType?: KeyType; notBefore?: Date; notAfter?: Date; commonName?: string } = {},
): CertificateFixture {
  const keys = makeKeyPair(options.keyType ?? 'ec-p256');
  const notBefore = options.notBefore ?? daysFromNow(-30);
  const notAfter = options.notAfter ?? daysFromNow(365);
  const dir = mkdtempSync(join(tmpdir(), 'ward-trust-'));
  try {
    mkdirSync(join(dir, 'issued'));
    writeFileSync(join(dir, 'index.txt'), '');
    writeFileSync(join(dir, 'ca.cnf'), OPENSSL_CA_CONFIG);
    writeFileSync(join(dir, 'key.pem'), keys.privateKey.export({ format: 'pem', type: 'pkcs8' }), {
      mode: 0o600,
    });
    const run = (args: string[]): void => {
      execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    };
    run([
      'req',
      '-new',
      '-key',
      'key.pem',
      '-subj',
      `/CN=${options.commonName ?? 'ward-test-agent'}`,
      '-out',
      'req.csr',
    ]);
    run([
      'ca',
      '-batch',
      '-config',
      'ca.cnf',
      '-selfsign',
      '-keyfile',
      'key.pem',
      '-in',
      'req.csr',
      '-startdate',
      opensslTime(notBefore),
      '-enddate',
      opensslTime(notAfter),
      '-rand_serial',
      '-notext',
      '-out',
      'cert.pem',
    ]);
    const pem = readFileSync(join(dir, 'cert.pem'), 'utf8');
    const der = new X509Certificate(pem).raw;
    return {
      ...keys,
      pem,
      derBase64: der.toString('base64'),
      thumbprint: createHash('sha256').update(der).digest('base64url'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The JWS alg that suits a key type. */
export function algFor(type: KeyType): 'ES256' | 'ES384' | 'PS256' | 'EdDSA' {
  return type === 'ec-p256' ? 'ES256' : type === 'ec-p384' ? 'ES384' : type === 'rsa' ? 'PS256' : 'EdDSA';
}

/** Signs `payload` as a compact JWS; `header` must include `alg`. */
export async function signJws(
  payload: Record<string, unknown>,
  privateKey: KeyObject | Uint8Array,
  header: { alg: string } & Record<string, unknown>,
): Promise<string> {
  return new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
    .setProtectedHeader(header)
    .sign(privateKey);
}

/** An unsecured JWS (`alg: none`, empty signature), built by hand because jose refuses to make one. */
export function unsecuredJws(payload: Record<string, unknown>): string {
  const part = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none' })}.${part(payload)}.`;
}

/** Signs a JWT; claims are taken as given (set `iat`/`exp` relative to NOW_SECONDS yourself). */
export async function signJwt(
  claims: JWTPayload,
  privateKey: KeyObject,
  header: { alg: string } & Record<string, unknown>,
): Promise<string> {
  return new SignJWT(claims).setProtectedHeader(header).sign(privateKey);
}
