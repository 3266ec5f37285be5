// Entry point of trust validation: runs the per-section checks and turns their findings into the
// record's trust_validation state and level. Any bad element fails the whole record, because a record
// that mixes good and bad evidence cannot be described honestly by a single level.
import { checkAttestations, type KnownIssuer } from './attestations.ts';
import { checkCertificates } from './certificates.ts';
import { checkRecordJwks, importTrustedJwks } from './jwks.ts';
import { checkSignatures } from './signatures.ts';
import type { JwkSet, TrustBinding, TrustValidationError } from './trust-types.ts';

export type {
  JwkObject,
  JwkSet,
  TrustBinding,
  TrustValidationError,
  TrustValidationErrorCode,
} from './trust-types.ts';
export { ALLOWED_JWS_ALGS, CLOCK_SKEW_SECONDS, TRUST_LIMITS } from './trust-types.ts';
export type { KnownIssuer } from './attestations.ts';

/** Trust level of a record: the strongest kind of evidence that verified. */
export type TrustLevel = 0 | 1 | 2 | 3;

/** What each trust level means; the documentation renders this table. */
export const TRUST_LEVELS: Readonly<Record<TrustLevel, string>> = {
  0: 'Self-asserted: no verifiable evidence (empty trust material, or only a jwks).',
  1: 'Certified: at least one X.509 certificate that parses and is inside its validity window.',
  2: "Signed: at least one JWS that verifies with a key from the record's certificates or jwks, or the owner's registry.",
  3: 'Attested: at least one JWT attestation that verifies with the keys of a known issuer.',
};

/** The trust material of an agent record, as submitted. */
export type TrustMaterial = {
  certificates: string[];
  signatures: string[];
  attestations: string[];
  jwks?: JwkSet;
};

/** Everything {@link validateTrustMaterial} needs; it does no I/O of its own. */
export type TrustValidationInput = {
  trust: TrustMaterial;
  /** Record fields that signed payloads must agree with. */
  binding: TrustBinding;
  /** Attestation issuers; the registry itself is always one of them at the call site. */
  knownIssuers: ReadonlyArray<KnownIssuer>;
  /** Keys the owner's registry publishes; they may verify record signatures. */
  registryJwks?: JwkSet;
  /** The instant validation is judged at; also stamped as `checked_at`. */
  now: Date;
};

/** Result stored as the record's `trust_validation` (minus the `pending` state, which precedes it). */
export type TrustValidationResult = {
  state: 'validated' | 'failed';
  /** Highest level reached; always 0 when `state` is `failed`. */
  level: TrustLevel;
  /** RFC 3339 UTC timestamp with milliseconds, taken from `now`. */
  checked_at: string;
  /** One entry per problem; empty when `state` is `validated`. */
  errors: TrustValidationError[];
  /** When the first valid certificate lapses (RFC 3339), or null without one: the record's evidence weakens then. */
  expires_at: string | null;
};

/**
 * Validates an agent record's trust material.
 *
 * Certificates must parse as X.509 and be valid at `now`; signatures must be compact JWS that verify
 * with keys from the record's certificates, the record's jwks or `registryJwks` (never a key the JWS
 * header supplies) and agree with `binding`; attestations must be JWTs from one of `knownIssuers`,
 * verified with that issuer's keys only; jwks keys must be public keys that import. Bounded by
 * `TRUST_LIMITS`, so it stays well under a second for any input the limits admit.
 *
 * @returns `validated` with the highest {@link TRUST_LEVELS} level reached, or `failed` at level 0 with
 *   one error per bad element.
 * @throws TypeError when `now` is not a valid date in years 0–9999 (a caller bug, not a property of the record).
 */
export async function validateTrustMaterial(input: TrustValidationInput): Promise<TrustValidationResult> {
  const { trust, binding, knownIssuers, registryJwks, now } = input;
  // toISOString leaves RFC 3339 (six-digit, signed years) outside years 0–9999.
  if (
    !(now instanceof Date) ||
    Number.isNaN(now.getTime()) ||
    now.getUTCFullYear() < 0 ||
    now.getUTCFullYear() > 9999
  ) {
    throw new TypeError('validateTrustMaterial: now must be a valid Date between years 0 and 9999');
  }
  const jwks = checkRecordJwks(trust.jwks);
  const certificates = checkCertificates(trust.certificates, now);
  const signatures = await checkSignatures(
    trust.signatures,
    {
      certificates: certificates.parsed,
      recordKeys: jwks.keys,
      registryKeys: importTrustedJwks(registryJwks),
    },
    binding,
    now,
  );
  const attestations = await checkAttestations(trust.attestations, knownIssuers, binding, now);

  // Errors are listed in record order so a client can walk them alongside its own document.
  const errors = [...certificates.errors, ...signatures.errors, ...attestations.errors, ...jwks.errors];
  const checked_at = now.toISOString();
  if (errors.length > 0) return { state: 'failed', level: 0, checked_at, errors, expires_at: null };
  const level: TrustLevel =
    attestations.verifiedCount > 0
      ? 3
      : signatures.verifiedCount > 0
        ? 2
        : certificates.validCount > 0
          ? 1
          : 0;
  return { state: 'validated', level, checked_at, errors: [], expires_at: certificates.expiresAt?.toISOString() ?? null };
}
