/**
 * Asking a trust mark's issuer whether the mark stands (OIDF §8.4): POST the mark to the issuer's
 * `federation_trust_mark_status_endpoint` and read its signed answer, `typ: trust-mark-status-response+jwt`
 * `{iss, iat, trust_mark, status}`. Only an answer verifying with keys the caller already trusts for the
 * issuer (from a validated chain), naming that issuer and the very mark asked about, counts. Shared by the
 * registry's resolver and the trust bundle verifier.
 */
import { TRUST_MARK_STATUSES, TRUST_MARK_STATUS_TYP, type TrustMarkStatus } from '../../contract/oidf-trust-marks.ts';
import { offeredKeyMembers, readProtectedHeader, verifyWithKeySet, type PublishedJwk } from '../../core/crypto/key-set.ts';
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
  const claims = verified.payload as { iss?: unknown; trust_mark?: unknown; status?: unknown };
  if (claims.iss !== issuer || claims.trust_mark !== trustMark) return { ok: false, message: `the status answer of ${endpoint} is not ${issuer}'s about this mark` };
  if (!TRUST_MARK_STATUSES.includes(claims.status as TrustMarkStatus)) return { ok: false, message: `the status answer of ${endpoint} says ${String(claims.status)}, not a status OIDF defines` };
  return { ok: true, status: claims.status as TrustMarkStatus };
}
