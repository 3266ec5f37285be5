// The trust marks a trust bundle carries (docs/federation.md, "One chain"), judged once its OIDF
// `trust_chain` has validated. Offline: each mark must be a `trust-mark+jwt` by the bundle's issuer
// (its entity identifier, a key its superior's statement names) about the subject, of the type it is
// listed under, and the trust anchor (the chain's last configuration) must recognise the issuer for that
// type in its `trust_mark_issuers`, as the registry's resolver judges marks (one rule: ../oidf/).
// Online: each mark still standing is asked about at the issuer's `federation_trust_mark_status_endpoint`,
// the signed answer verified with the same issuer keys; `revoked` means what the mark asserted no longer
// holds (an agent suspended, its validation lapsed), and nothing short of a verified answer counts.
import { TRUST_MARK_TYP, agentEntityIdentifier, type TrustMarkEntry } from '../../contract/oidf-trust-marks.ts';
import { FEDERATION_ENTITY_TYPE, type EntityMetadata, type EntityStatementClaims } from '../../contract/openid-federation.ts';
import type { TrustBundle } from '../../contract/trust-bundle.ts';
import { SKEW_MS, offeredKeyMembers, readProtectedHeader, verifyWithKeySet, type PublishedJwk } from '../../core/crypto/key-set.ts';
import { trustMarkIssuerRefusal } from '../oidf/trust-mark-issuers.ts';
import { askTrustMarkStatus } from '../oidf/trust-mark-status.ts';
import type { ChainVerificationError } from './chain-errors.ts';
import { onlineFetchOptions, type OnlineStatusOptions } from './statement-status.ts';

type Step = (name: string, detail: string, errors: ChainVerificationError[], skipped?: boolean) => void;

/** The step that judges the marks offline. */
export const TRUST_MARKS_STEP = 'Trust marks';

/** The step that asks the marks' status online (after {@link TRUST_MARKS_STEP}). */
export const TRUST_MARK_STATUS_STEP = 'Trust mark status';

/** Marks asked about online per bundle (each costs a request); Ward issues at most two per agent. */
export const MAX_MARKS_ASKED = 8;

export type BundleMarksCheck = {
  fields: TrustBundle;
  /** The validated chain: the issuer's configuration … the trust anchor's. */
  statements: readonly EntityStatementClaims[];
  /** The keys the chain states for the issuer (its superior's statement's, or the anchor's). */
  issuerKeys: readonly PublishedJwk[];
  /** The issuer's resolved metadata (its status endpoint is read from it), when it resolved. */
  metadata: EntityMetadata | undefined;
  now: Date;
  online: OnlineStatusOptions | undefined;
  step: Step;
};

/** A mark that passed the offline checks and has not expired: what online asks about. */
type StandingMark = { label: string; entry: TrustMarkEntry };

/** Every problem of the bundle's marks; records the "Trust marks" step and, online, {@link TRUST_MARK_STATUS_STEP}. */
export async function checkBundleTrustMarks(check: BundleMarksCheck): Promise<ChainVerificationError[]> {
  const { fields, step } = check;
  const offline = await offlineMarkErrors(check);
  const types = (fields.trust_marks ?? []).map((mark) => String(mark?.trust_mark_type)).join(', ');
  const anchor = check.statements.at(-1) as EntityStatementClaims;
  const issuers = anchor.trust_mark_issuers === undefined ? '; the trust anchor publishes no trust_mark_issuers (any issuer)' : "; each issuer checked against the trust anchor's trust_mark_issuers";
  step(TRUST_MARKS_STEP, types === '' ? '(none)' : `${types}${issuers}${expiredNote(offline.expired)}`, offline.errors);
  if (!check.online) return offline.errors;
  const online = await onlineMarkErrors(check, offline.standing, check.online);
  const told = online.told.join('; ') || 'no mark to ask about';
  step(TRUST_MARK_STATUS_STEP, `${told}${expiredNote(online.expired)}`, online.errors);
  return [...offline.errors, ...online.errors];
}

const expiredNote = (expired: number) => (expired > 0 ? `; ${expired} expired (ask the issuer's trust mark endpoint for a fresh one)` : '');

/**
 * The offline judgement. An expired mark is counted, not an error: marks live as long as a subordinate
 * statement, a bundle an hour, so a bundle may outlive a mark it carries.
 */
async function offlineMarkErrors(check: BundleMarksCheck): Promise<{ errors: ChainVerificationError[]; expired: number; standing: StandingMark[] }> {
  const { fields, issuerKeys, now } = check;
  const issuer = check.statements[0] as EntityStatementClaims;
  const anchor = check.statements.at(-1) as EntityStatementClaims;
  const errors: ChainVerificationError[] = [];
  const standing: StandingMark[] = [];
  let expired = 0;
  const subject = fields.subject.includes('/agents/') ? agentEntityIdentifier(issuer.sub, fields.subject) : undefined;
  for (const [index, entry] of (fields.trust_marks ?? []).entries()) {
    const label = `trust mark ${index + 1} (${String(entry?.trust_mark_type)})`;
    const bad = (why: string) => errors.push({ code: 'TRUST_MARK_INVALID', message: `${label}: ${why}` });
    const header = readProtectedHeader(entry?.trust_mark);
    if (!header || header.typ !== TRUST_MARK_TYP || offeredKeyMembers(header).length > 0) {
      bad(`not a ${TRUST_MARK_TYP} offering no key`);
      continue;
    }
    const verified = await verifyWithKeySet(entry.trust_mark, header, issuerKeys, now);
    if (!verified.ok) {
      bad(verified.message);
      continue;
    }
    const claims = verified.payload as Record<string, unknown>;
    if (claims.iss !== issuer.sub || claims.trust_mark_type !== entry.trust_mark_type || (subject !== undefined && claims.sub !== subject)) {
      bad('its iss, sub or trust_mark_type is not what the bundle lists');
      continue;
    }
    const refusal = trustMarkIssuerRefusal(anchor, entry.trust_mark_type, issuer.sub);
    if (refusal !== undefined) errors.push({ code: 'TRUST_MARK_ISSUER_NOT_ALLOWED', message: `${label}: ${refusal}` });
    else if (!(typeof claims.exp === 'number' && claims.exp * 1000 > now.getTime() - SKEW_MS)) expired += 1;
    else standing.push({ label, entry });
  }
  return { errors, expired, standing };
}

/** Online: each standing mark's status at the issuer's status endpoint; see the file comment. */
async function onlineMarkErrors(check: BundleMarksCheck, standing: readonly StandingMark[], online: OnlineStatusOptions) {
  const issuer = (check.statements[0] as EntityStatementClaims).sub;
  const endpoint = check.metadata?.[FEDERATION_ENTITY_TYPE]?.federation_trust_mark_status_endpoint;
  const options = onlineFetchOptions(online);
  const unavailable = (mark: StandingMark, why: string): ChainVerificationError => ({ code: 'STATUS_UNAVAILABLE', message: `${mark.label}: ${why}` });
  const verdicts = await Promise.all(
    standing.map(async (mark, index): Promise<{ error?: ChainVerificationError; told?: string; expired?: boolean }> => {
      if (index >= MAX_MARKS_ASKED) return { error: unavailable(mark, `not asked: a bundle's first ${MAX_MARKS_ASKED} marks are, no more`) };
      if (typeof endpoint !== 'string') return { error: unavailable(mark, `${issuer}'s configuration names no federation_trust_mark_status_endpoint`) };
      const answer = await askTrustMarkStatus({ endpoint, issuer, issuerKeys: check.issuerKeys, trustMark: mark.entry.trust_mark }, options, new Date());
      if (!answer.ok) return { error: unavailable(mark, answer.message) };
      const told = `${mark.entry.trust_mark_type}: ${answer.status}`;
      if (answer.status === 'revoked') return { told, error: { code: 'TRUST_MARK_REVOKED', message: `${mark.label}: ${issuer} says it is revoked (what it asserted no longer holds)` } };
      if (answer.status === 'invalid') return { told, error: { code: 'TRUST_MARK_INVALID', message: `${mark.label}: ${issuer} says it is invalid` } };
      return { told, expired: answer.status === 'expired' };
    }),
  );
  return {
    errors: verdicts.flatMap((verdict) => (verdict.error ? [verdict.error] : [])),
    told: verdicts.flatMap((verdict) => (verdict.told ? [verdict.told] : [])),
    expired: verdicts.filter((verdict) => verdict.expired).length,
  };
}
