// A throwaway PKI made with the openssl CLI (the same commands docs/auth-modes.md shows): a CA, a
// server certificate for 127.0.0.1, client certificates from the CA (valid, a second one, an expired
// one) and a self-signed rogue client. TLS checks dates against the real clock, so dates are real.
import { Buffer } from 'node:buffer';
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OPENSSL_CA_CONFIG, opensslTime } from '../../helpers/openssl-ca.ts';

export type Pki = {
  dir: string;
  /** Absolute path of a file in the PKI directory, e.g. `path('client.pem')`. */
  path(file: string): string;
  pem(name: string): Buffer;
  /** Private key `<name>.key`. */
  key(name: string): Buffer;
  /** DER of certificate `<name>.pem`. */
  der(name: string): Buffer;
  /** OpenSSL's own SHA-256 fingerprint of `<name>.pem`, as base64url (an independent thumbprint). */
  opensslThumbprint(name: string): string;
  /** Revokes `<name>.pem` at the CA and writes the CA's CRL; returns the CRL file's path. */
  revoke(name: string): string;
  remove(): void;
};


const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
const DAY_MS = 86_400_000;


export function makePki(): Pki {
  const dir = mkdtempSync(join(tmpdir(), 'ward-pki-'));
  const run = (args: string[]) =>
    execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] }).toString();
  mkdirSync(join(dir, 'issued'));
  writeFileSync(join(dir, 'index.txt'), '');
  writeFileSync(join(dir, 'ca.cnf'), OPENSSL_CA_CONFIG);
  run([
    'req',
    '-x509',
    ...EC_KEY,
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '3',
    '-subj',
    '/CN=Ward Test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);

  const issue = (name: string, extensions: string, from: Date, until: Date) => {
    run(['req', '-new', ...EC_KEY, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`]);
    writeFileSync(join(dir, `${name}.ext`), extensions);
    run([
      'ca',
      '-batch',
      '-config',
      'ca.cnf',
      '-cert',
      'ca.pem',
      '-keyfile',
      'ca.key',
      '-in',
      `${name}.csr`,
      '-extfile',
      `${name}.ext`,
      '-startdate',
      opensslTime(from),
      '-enddate',
      opensslTime(until),
      '-rand_serial',
      '-notext',
      '-out',
      `${name}.pem`,
    ]);
  };
  const now = Date.now();
  const yesterday = new Date(now - DAY_MS);
  const tomorrow = new Date(now + DAY_MS);
  const clientExt =
    'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n';
  issue(
    'server',
    'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1\n',
    yesterday,
    tomorrow,
  );
  issue('client', clientExt, yesterday, tomorrow);
  issue('other-client', clientExt, yesterday, tomorrow);
  issue('expired-client', clientExt, new Date(now - 10 * DAY_MS), new Date(now - 5 * DAY_MS));
  // Same subject as the real client, but signed by itself: only the chain can tell them apart.
  run([
    'req',
    '-x509',
    ...EC_KEY,
    '-keyout',
    'rogue.key',
    '-out',
    'rogue.pem',
    '-days',
    '2',
    '-subj',
    '/CN=client',
    '-addext',
    'extendedKeyUsage=clientAuth',
  ]);

  return {
    dir,
    path: (file) => join(dir, file),
    pem: (name) => readFileSync(join(dir, `${name}.pem`)),
    key: (name) => readFileSync(join(dir, `${name}.key`)),
    der: (name) => new X509Certificate(readFileSync(join(dir, `${name}.pem`))).raw,
    opensslThumbprint(name) {
      const line = run(['x509', '-in', `${name}.pem`, '-noout', '-fingerprint', '-sha256']);
      const hex = line.trim().split('=')[1]?.replaceAll(':', '') ?? '';
      return Buffer.from(hex, 'hex').toString('base64url');
    },
    revoke(name) {
      run(['ca', '-config', 'ca.cnf', '-cert', 'ca.pem', '-keyfile', 'ca.key', '-revoke', `${name}.pem`]);
      run(['ca', '-config', 'ca.cnf', '-cert', 'ca.pem', '-keyfile', 'ca.key', '-gencrl', '-crldays', '1', '-out', 'crl.pem']);
      return join(dir, 'crl.pem');
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
