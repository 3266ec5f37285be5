/**
 * The trust marks a resolve response carries (OIDF §8.3.2): of the marks in the subject's entity
 * configuration, those valid now. Each must be a compact JWS typed `trust-mark+jwt` offering no key,
 * about the subject, of the type it is listed under, unexpired, signed by its issuer with a key the
 * validated chain states for that issuer (so the issuer is an entity of the chain), by an issuer the
 * trust anchor's `trust_mark_issuers` allows for that type (when the anchor publishes the claim), and
 * `active` at its issuer's status endpoint (OIDF §8.4; this registry judges its own marks locally).
 * Anything short of that drops the mark, silently: the resolve answer is about the subject, not its marks.
 */
import { TRUST_MARK_TYP, type TrustMarkEntry } from '../../../contract/oidf-trust-marks.ts';
import type { EntityStatementClaims } from '../../../contract/openid-federation.ts';
import { SKEW_MS, offeredKeyMembers, readProtectedHeader, verifyWithKeySet, type PublishedJwk } from '../../../core/crypto/key-set.ts';
import { trustMarkIssuerRefusal } from '../../../client/oidf/trust-mark-issuers.ts';
import { askTrustMarkStatus } from '../../../client/oidf/trust-mark-status.ts';
import { ownEntityId } from './entity-configuration.ts';
import type { OidfDeps } from './oidf-deps.ts';
import { trustMarkStatus } from './trust-marks.ts';

/** Marks checked per resolution (each may cost a status request). */
const MAX_MARKS = 8;

export type ChainKnowledge = {
  /** The validated chain's statements: subject's configuration … anchor's configuration. */
  statements: readonly EntityStatementClaims[];
  /** The anchor's keys when this registry holds them (it is the anchor). */
  anchorKeys: readonly PublishedJwk[] | undefined;
  /** Each chain entity's `federation_trust_mark_status_endpoint`, from its own configuration. */
  statusEndpoints: ReadonlyMap<string, string>;
};

/** The keys the validated chain states for each of its entities (a superior's word for a subordinate's). */
export function chainKeys(statements: readonly EntityStatementClaims[], anchorKeys: readonly PublishedJwk[] | undefined): Map<string, readonly PublishedJwk[]> {
  const keys = new Map<string, readonly PublishedJwk[]>();
  const last = statements.length - 1;
  const anchor = statements[last] as EntityStatementClaims;
  keys.set(anchor.sub, anchorKeys ?? anchor.jwks.keys);
  for (let j = last - 1; j >= 1; j -= 1) {
    const statement = statements[j] as EntityStatementClaims;
    keys.set(statement.sub, statement.jwks.keys);
  }
  return keys;
}

/** The mark's claims when it verifies as a mark of `entry`'s type about `subject` by a chain entity, else undefined. */
async function verifiedMark(entry: TrustMarkEntry, subject: string, keys: ReadonlyMap<string, readonly PublishedJwk[]>, now: Date) {
  const header = readProtectedHeader(entry.trust_mark);
  if (!header || header.typ !== TRUST_MARK_TYP || offeredKeyMembers(header).length > 0) return undefined;
  const unverified = decodePayload(entry.trust_mark);
  const issuerKeys = typeof unverified?.iss === 'string' ? keys.get(unverified.iss) : undefined;
  if (!issuerKeys) return undefined;
  const verified = await verifyWithKeySet(entry.trust_mark, header, issuerKeys, now);
  if (!verified.ok) return undefined;
  const claims = verified.payload as { iss?: unknown; sub?: unknown; trust_mark_type?: unknown; exp?: unknown };
  if (claims.iss !== unverified?.iss || claims.sub !== subject || claims.trust_mark_type !== entry.trust_mark_type) return undefined;
  if (typeof claims.exp !== 'number' || !(claims.exp * 1000 > now.getTime() - SKEW_MS)) return undefined;
  return { iss: claims.iss as string };
}

function decodePayload(jwt: string): Record<string, unknown> | undefined {
  try {
    const payload = JSON.parse(Buffer.from(jwt.split('.')[1] as string, 'base64url').toString('utf8')) as unknown;
    return payload !== null && typeof payload === 'object' ? (payload as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `issuer` says `mark` is `active` now: locally for this registry's own, else at its status endpoint, answer verified. */
async function activeAtIssuer(deps: OidfDeps, issuer: string, mark: string, knowledge: ChainKnowledge, keys: readonly PublishedJwk[], now: Date): Promise<boolean> {
  if (issuer === ownEntityId(deps)) return (await trustMarkStatus(deps, mark)) === 'active';
  const endpoint = knowledge.statusEndpoints.get(issuer);
  if (!endpoint) return false;
  const answer = await askTrustMarkStatus({ endpoint, issuer, issuerKeys: keys, trustMark: mark }, { fetch: deps.fetch, timeoutMs: deps.config.REGISTRY_FEDERATION_TIMEOUT_MS }, now);
  return answer.ok && answer.status === 'active';
}

/** The subject's trust marks (from its configuration, ES[0]) that are valid now; see the file comment. */
export async function validTrustMarks(deps: OidfDeps, knowledge: ChainKnowledge, now: Date): Promise<TrustMarkEntry[]> {
  const { statements } = knowledge;
  const subject = statements[0] as EntityStatementClaims;
  const anchor = statements.at(-1) as EntityStatementClaims;
  const keys = chainKeys(statements, knowledge.anchorKeys);
  const entries = (subject.trust_marks ?? []).filter(
    (entry): entry is TrustMarkEntry => entry !== null && typeof entry === 'object' && typeof entry.trust_mark_type === 'string' && typeof entry.trust_mark === 'string',
  );
  const verdicts = await Promise.all(
    entries.slice(0, MAX_MARKS).map(async (entry) => {
      const mark = await verifiedMark(entry, subject.sub, keys, now);
      if (!mark || trustMarkIssuerRefusal(anchor, entry.trust_mark_type, mark.iss) !== undefined) return false;
      return activeAtIssuer(deps, mark.iss, entry.trust_mark, knowledge, keys.get(mark.iss) as readonly PublishedJwk[], now).catch(() => false);
    }),
  );
  return entries.slice(0, MAX_MARKS).filter((_entry, index) => verdicts[index]);
}
