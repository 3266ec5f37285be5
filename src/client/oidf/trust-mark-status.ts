/**
 * Asking a trust mark's issuer whether the mark stands (OIDF §8.4): POST the mark to the issuer's
 * `federation_trust_mark_status_endpoint` and read its signed answer, `typ: trust-mark-status-response+jwt`
 * `{iss, iat, trust_mark, status}`. Only an answer verifying with keys the caller already trusts for the
 * issuer (from a validated chain), naming that issuer and the very mark asked about, and fresh
 * ({@link freshStatusAnswer}), counts. Shared by the registry's resolver and the trust bundle verifier;
 * the freshness rule also by the registry's check of its superior's revocation.
 */
import { TRUST_MARK_STATUSES, TRUST_MARK_STATUS_TYP, type TrustMarkStatus } from '../../contract/oidf-trust-marks.ts';
import { SKEW_MS, offeredKeyMembers, readProtectedHeader, verifyWithKeySet, type PublishedJwk } from '../../core/crypto/key-set.ts';
import { postTrustMarkStatus, type OidfFetchOptions } from '../openid-federation-client.ts';

export type TrustMarkStatusQuestion = {
  /** The issuer's status endpoint, from its entity configuration in a validated chain. */
  endpoint: string;
  /** The issuer's entity identifier (the mark's verified `iss`). */
  issuer: string;
  /** The keys the validated chain states for the issuer. */
  issuerKeys: readonly PublishedJwk[];
  trustMark: string;
};

/**
 * How old a status answer may be and still say how the mark stands now. The answer carries no `exp`
 * (OIDF §8.4.2), only `iat`; without a bound, anyone between the asker and the issuer could replay an
 * old `active` answer until the mark itself expires, hiding its revocation.
 */
export const STATUS_ANSWER_MAX_AGE_MS = 5 * 60_000;

/**
 * Whether a status answer's `iat` (seconds) is fresh at `now`: a number within
 * [now − {@link STATUS_ANSWER_MAX_AGE_MS}, now + {@link SKEW_MS}] (ahead by at most the clock skew allowed everywhere).
 */
export function freshStatusAnswer(iat: unknown, now: Date): boolean {
  if (typeof iat !== 'number' || !Number.isFinite(iat)) return false;
  const iatMs = iat * 1000;
  return iatMs <= now.getTime() + SKEW_MS && iatMs >= now.getTime() - STATUS_ANSWER_MAX_AGE_MS;
}

/** The issuer's verified word on the mark, or why none could be had. */
export type TrustMarkStatusAnswer = { ok: true; status: TrustMarkStatus } | { ok: false; message: string };

/** Asks `question.endpoint` for the mark's status and verifies the answer (see the file comment). */
export async function askTrustMarkStatus(question: TrustMarkStatusQuestion, options: OidfFetchOptions, now: Date): Promise<TrustMarkStatusAnswer> {
  const { endpoint, issuer, issuerKeys, trustMark } = question;
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return { ok: false, message: `the status endpoint ${endpoint} is not a URL` };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { ok: false, message: `the status endpoint ${endpoint} is not an http(s) URL` };
  const answer = await postTrustMarkStatus(url.href, trustMark, options);
  if (!answer.ok) return { ok: false, message: answer.message };
  const header = readProtectedHeader(answer.jwt);
  if (!header || header.typ !== TRUST_MARK_STATUS_TYP || offeredKeyMembers(header).length > 0) {
    return { ok: false, message: `${endpoint} answered no ${TRUST_MARK_STATUS_TYP} offering no key` };
  }
  const verified = await verifyWithKeySet(answer.jwt, header, issuerKeys, now);
  if (!verified.ok) return { ok: false, message: `the status answer of ${endpoint} does not verify with ${issuer}'s keys: ${verified.message}` };
  const claims = verified.payload as { iss?: unknown; iat?: unknown; trust_mark?: unknown; status?: unknown };
  if (claims.iss !== issuer || claims.trust_mark !== trustMark) return { ok: false, message: `the status answer of ${endpoint} is not ${issuer}'s about this mark` };
  if (!freshStatusAnswer(claims.iat, now)) {
    return { ok: false, message: `the status answer of ${endpoint} is not fresh: its iat ${String(claims.iat)} is not within ${STATUS_ANSWER_MAX_AGE_MS / 60_000} minutes before now (${SKEW_MS / 1000} s after)` };
  }
  if (!TRUST_MARK_STATUSES.includes(claims.status as TrustMarkStatus)) return { ok: false, message: `the status answer of ${endpoint} says ${String(claims.status)}, not a status OIDF defines` };
  return { ok: true, status: claims.status as TrustMarkStatus };
}
