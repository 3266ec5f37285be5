// The reasons a trust bundle or its delegation chain fails verification. Stable codes, never reused;
// docs/federation.md ("Verifying a chain") explains each, and a test keeps the list and the table in step.

/** Every code `verifyTrustBundle` reports; each is explained once, in the table of docs/federation.md. */
export const CHAIN_VERIFICATION_CODES = [
  'BUNDLE_MALFORMED',
  'BUNDLE_KEY_UNKNOWN',
  'BUNDLE_SIGNATURE_INVALID',
  'BUNDLE_TAMPERED',
  'BUNDLE_EXPIRED',
  'BUNDLE_NOT_YET_VALID',
  'CHAIN_MISMATCH',
  'KEY_URL_REFUSED',
  'KEY_EXPIRED',
  'KEY_NOT_YET_VALID',
  'STATEMENT_MALFORMED',
  'STATEMENT_KEY_UNKNOWN',
  'STATEMENT_SIGNATURE_INVALID',
  'STATEMENT_WRONG_ISSUER',
  'STATEMENT_EXPIRED',
  'STATEMENT_NOT_YET_VALID',
  'CONSTRAINT_PATH_LENGTH',
  'CONSTRAINT_JURISDICTION',
  'CONSTRAINT_TIER',
  'STATEMENT_REVOKED',
  'STATUS_UNAVAILABLE',
  'TRUST_CHAIN_INVALID',
  'TRUST_MARK_INVALID',
  'TRUST_MARK_ISSUER_NOT_ALLOWED',
  'TRUST_MARK_REVOKED',
] as const;

export type ChainVerificationCode = (typeof CHAIN_VERIFICATION_CODES)[number];

/** A problem found; `statement` is the index of the delegation statement it is about, when it is about one. */
export type ChainVerificationError = { code: ChainVerificationCode; message: string; statement?: number };
