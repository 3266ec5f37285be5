// REGISTRY_AUTH_MODE=mtls: the TLS stack checks the client certificate chain at the handshake; this
// module loads the server's TLS material and checks that a token is bound to the certificate presented.
import type { Buffer } from 'node:buffer';
import { X509Certificate, createHash, createPrivateKey, type KeyObject } from 'node:crypto';
import { readFileSync, unwatchFile, watchFile, type Stats } from 'node:fs';
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import { AuthFailure } from './auth-failure.ts';

/**
 * The RFC 8705 §3.1 certificate thumbprint (`x5t#S256`): base64url, unpadded, of the SHA-256 of the
 * certificate's DER encoding.
 */
export function certificateThumbprint(der: Buffer): string {
  return createHash('sha256').update(der).digest('base64url');
}

/**
 * Refuses a token that is not bound to the client certificate of this connection (RFC 8705 §3): its
 * `cnf["x5t#S256"]` must equal {@link certificateThumbprint} of `clientCertDer`. A token without the
 * claim is refused too, since in mtls mode an unbound token could be replayed from any certificate.
 */
export function assertCertificateBound(
  claims: Record<string, unknown>,
  clientCertDer: Buffer | undefined,
): void {
  if (clientCertDer === undefined || clientCertDer.length === 0) {
    throw new AuthFailure('binding_mismatch', 'No client certificate was presented on this connection.');
  }
  const cnf = claims['cnf'];
  const bound =
    typeof cnf === 'object' && cnf !== null ? (cnf as Record<string, unknown>)['x5t#S256'] : undefined;
  if (typeof bound !== 'string') {
    throw new AuthFailure(
      'binding_mismatch',
      'The access token is not bound to a client certificate (cnf.x5t#S256).',
    );
  }
  if (bound !== certificateThumbprint(clientCertDer)) {
    throw new AuthFailure('binding_mismatch', 'The access token is bound to a different client certificate.');
  }
}

/** The TLS files of the registry (contract §7). */
export type TlsFiles = {
  /** `REGISTRY_TLS_CERT_FILE`: PEM server certificate, chain after it. */
  certFile: string;
  /** `REGISTRY_TLS_KEY_FILE`: PEM private key of that certificate. */
  keyFile: string;
  /** `REGISTRY_MTLS_CA_FILE`: PEM CA certificate(s) client certificates must chain to; unset = no client certificates. */
  caFile?: string;
  /** `REGISTRY_MTLS_CRL_FILE`: PEM certificate revocation list(s) of that CA; a revoked client certificate fails the handshake. */
  crlFile?: string;
};

/** Options for `https.createServer` / Fastify's `https` option. */
export type TlsServerOptions = {
  key: Buffer;
  cert: Buffer;
  ca?: Buffer;
  crl?: Buffer;
  requestCert: boolean;
  rejectUnauthorized: boolean;
  minVersion: 'TLSv1.2';
};

function readPem(file: string, what: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new Error(`Cannot read the ${what} file ${file} (${code}).`, { cause: error });
  }
}

function parse<T>(file: string, what: string, parseContent: () => T): T {
  try {
    return parseContent();
  } catch (error) {
    throw new Error(`The ${what} file ${file} does not hold a PEM ${what}.`, { cause: error });
  }
}

/**
 * Reads the TLS files into server options, checking them now so a bad file stops start-up with its
 * name rather than failing every handshake later. With `caFile` the server demands a client
 * certificate chained to it and the handshake fails without one (`requestCert` + `rejectUnauthorized`);
 * the certificate's validity dates and chain are checked by OpenSSL. TLS 1.2 is the floor.
 */
export function tlsServerOptions(files: TlsFiles): TlsServerOptions {
  const cert = readPem(files.certFile, 'TLS certificate');
  const key = readPem(files.keyFile, 'TLS private key');
  const certificate = parse(files.certFile, 'TLS certificate', () => new X509Certificate(cert));
  const privateKey: KeyObject = parse(files.keyFile, 'TLS private key', () => createPrivateKey(key));
  if (!certificate.checkPrivateKey(privateKey)) {
    throw new Error(
      `The TLS private key ${files.keyFile} does not belong to the certificate ${files.certFile}.`,
    );
  }
  if (files.caFile === undefined) {
    return { key, cert, requestCert: false, rejectUnauthorized: false, minVersion: 'TLSv1.2' };
  }
  const ca = readPem(files.caFile, 'client CA certificate');
  parse(files.caFile, 'client CA certificate', () => new X509Certificate(ca));
  const crl = files.crlFile === undefined ? undefined : readCrl(files.crlFile);
  return { key, cert, ca, ...(crl ? { crl } : {}), requestCert: true, rejectUnauthorized: true, minVersion: 'TLSv1.2' };
}

/** A CRL file, checked to hold at least one PEM CRL that OpenSSL accepts (a bad file stops start-up). */
function readCrl(file: string): Buffer {
  const crl = readPem(file, 'certificate revocation list');
  if (!crl.toString('latin1').includes('-----BEGIN X509 CRL-----')) {
    throw new Error(`The certificate revocation list file ${file} does not hold a PEM X509 CRL.`);
  }
  parse(file, 'certificate revocation list', () => createSecureContext({ crl }));
  return crl;
}

/**
 * Re-reads the CRL file when it changes (checked every `intervalMs`), so a revocation published by
 * the CA takes effect without a restart: new handshakes use the new list. A file that no longer reads
 * as a CRL is logged and the previous list kept.
 */
export function watchCrl(server: { setSecureContext(options: SecureContextOptions): void }, files: TlsFiles, log: (message: string, error?: unknown) => void, intervalMs = 60_000): () => void {
  const crlFile = files.crlFile;
  if (crlFile === undefined) return () => {};
  const listener = (current: Stats, previous: Stats) => {
    if (current.mtimeMs === previous.mtimeMs && current.size === previous.size) return;
    try {
      server.setSecureContext(tlsServerOptions(files));
      log('certificate revocation list reloaded');
    } catch (error) {
      log('certificate revocation list not reloaded; the previous one stays in force', error);
    }
  };
  watchFile(crlFile, { interval: intervalMs }, listener);
  return () => unwatchFile(crlFile, listener);
}
