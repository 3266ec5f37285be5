// REGISTRY_AUTH_MODE=mtls: the TLS stack checks the client certificate chain at the handshake; this
// module loads the server's TLS material and checks that a token is bound to the certificate presented.
import type { Buffer } from 'node:buffer';
import { X509Certificate, createHash, createPrivateKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
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
};

/** Options for `https.createServer` / Fastify's `https` option. */
export type TlsServerOptions = {
  key: Buffer;
  cert: Buffer;
  ca?: Buffer;
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
  return { key, cert, ca, requestCert: true, rejectUnauthorized: true, minVersion: 'TLSv1.2' };
}
