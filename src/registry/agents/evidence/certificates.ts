// Certificate checks: each element must be exactly one X.509 certificate, in PEM or as the base64 DER
// form JWK `x5c` uses, and `now` must fall inside its validity window. Chains are not built here.
import { Buffer } from 'node:buffer';
import { X509Certificate, createHash, type KeyObject } from 'node:crypto';
import { isOversized, sectionElements, type TrustValidationError } from './trust-types.ts';

/** A certificate that parsed; its key is a verification candidate even if the window check failed. */
export type ParsedCertificate = {
  der: Buffer;
  /** base64url SHA-256 of the DER, as JWS `x5t#S256` carries it. */
  thumbprint: string;
  /** Undefined when the certificate's key type is not one Node can load. */
  key: KeyObject | undefined;
};

const PEM_BEGIN = '-----BEGIN CERTIFICATE-----';
const PEM_END = '-----END CERTIFICATE-----';
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Decodes one certificate element to DER, or returns undefined. Exactly one certificate is allowed
 * so that a bundle cannot smuggle unchecked certificates past the validator.
 */
export function certificateDer(element: string): Buffer | undefined {
  const text = element.trim();
  let base64: string;
  if (text.startsWith(PEM_BEGIN)) {
    if (!text.endsWith(PEM_END) || text.indexOf(PEM_BEGIN, 1) !== -1) return undefined;
    base64 = text.slice(PEM_BEGIN.length, text.length - PEM_END.length).replace(/\s+/g, '');
  } else {
    // x5c form: standard base64 without line breaks; the original, untrimmed, must already be clean.
    base64 = element;
  }
  if (base64.length === 0 || !BASE64.test(base64)) return undefined;
  return Buffer.from(base64, 'base64');
}

/** base64url SHA-256 of DER bytes: the `x5t#S256` thumbprint. */
export function derThumbprint(der: Buffer): string {
  return createHash('sha256').update(der).digest('base64url');
}

/**
 * Validates `trust.certificates`. Returns one error per bad element, the parsed certificates (for key
 * selection), how many are fully valid (for the trust level) and when the first valid one lapses.
 */
export function checkCertificates(
  certificates: unknown,
  now: Date,
): { errors: TrustValidationError[]; parsed: ParsedCertificate[]; validCount: number; expiresAt?: Date } {
  const errors: TrustValidationError[] = [];
  const parsed: ParsedCertificate[] = [];
  let validCount = 0;
  let expiresAt: Date | undefined;
  const list = sectionElements(certificates, 'certificates', 'CERT_UNPARSEABLE', errors);
  if (!list) return { errors, parsed, validCount };
  list.forEach((element, index) => {
    const pointer = `/trust/certificates/${index}`;
    if (typeof element !== 'string' || isOversized(element)) {
      errors.push({
        code: 'CERT_UNPARSEABLE',
        pointer,
        message: 'A certificate must be a string of at most 16 KiB.',
      });
      return;
    }
    const der = certificateDer(element);
    let cert: X509Certificate | undefined;
    try {
      cert = der === undefined ? undefined : new X509Certificate(der);
    } catch {
      cert = undefined;
    }
    // OpenSSL stops reading at the end of the first certificate; trailing bytes would go unchecked.
    if (der === undefined || cert === undefined || !cert.raw.equals(der)) {
      errors.push({
        code: 'CERT_UNPARSEABLE',
        pointer,
        message: 'Not a single X.509 certificate in PEM or base64 DER form.',
      });
      return;
    }
    let key: KeyObject | undefined;
    try {
      key = cert.publicKey;
    } catch {
      key = undefined;
    }
    parsed.push({ der, thumbprint: derThumbprint(der), key });
    if (now.getTime() < cert.validFromDate.getTime()) {
      errors.push({ code: 'CERT_NOT_YET_VALID', pointer, message: 'The certificate is not valid yet.' });
    } else if (now.getTime() > cert.validToDate.getTime()) {
      errors.push({ code: 'CERT_EXPIRED', pointer, message: 'The certificate has expired.' });
    } else {
      validCount += 1;
      if (!expiresAt || cert.validToDate < expiresAt) expiresAt = cert.validToDate;
    }
  });
  return { errors, parsed, validCount, ...(expiresAt ? { expiresAt } : {}) };
}
