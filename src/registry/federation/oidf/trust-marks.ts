/**
 * Trust marks this registry issues (OIDF §7; docs/federation.md, "Trust marks"), from the table in
 * ../../contract/oidf-trust-marks.ts: about its own agents (what trust validation found) and about its
 * child registries (a delegation it made and has not revoked). A mark is signed with the registry's
 * current federation key (`typ: trust-mark+jwt`) and lives REGISTRY_DELEGATION_TTL_SECONDS, like a
 * subordinate statement. Nothing is stored: the trust mark endpoint (OIDF §8.6) issues a mark only while
 * the property holds, and the status endpoint (OIDF §8.4) judges a mark against the record as it is
 * now, so a suspension, a revocation or a lapsed validation shows at once (docs/decisions.md 70).
 */
import {
  TRUST_MARK_STATUS_TYP,
  TRUST_MARK_TYP,
  WARD_TRUST_MARKS,
  agentEntityIdentifier,
  agentIdFromEntityIdentifier,
  trustMarkEntry,
  wardTrustMark,
  type TrustMarkClaims,
  type TrustMarkEntry,
  type TrustMarkStatus,
  type TrustMarkStatusClaims,
} from '../../../contract/oidf-trust-marks.ts';
import type { AgentRecord } from '../../../contract/agent-record.ts';
import { entityIdentifier } from '../../../contract/openid-federation.ts';
import { SKEW_MS, offeredKeyMembers, readProtectedHeader, verifyWithKeySet, type PublishedJwk } from '../../../core/crypto/key-set.ts';
import type { RegistryRow } from '../storage/registry-store.ts';
import { ownEntityId } from './entity-configuration.ts';
import { OidfError } from '../../../client/oidf/oidf-error.ts';
import type { OidfDeps } from './oidf-deps.ts';
import { findSubordinate } from './subordinate-statements.ts';

type MarkDefinition = (typeof WARD_TRUST_MARKS)[number];
type Subject = { kind: 'agent'; record: AgentRecord } | { kind: 'registry'; row: RegistryRow };
/** Whether the property a mark asserts holds now, with the claims it adds and a cap on its exp. */
type Verdict = { holds: true; claims: Partial<TrustMarkClaims>; notAfter?: number } | { holds: false; why: string };

/** The subject `sub` names for a mark of `definition`, or undefined when this registry has none such. */
async function subjectOf(deps: OidfDeps, definition: MarkDefinition, sub: string): Promise<Subject | undefined> {
  if (definition.subject === 'agent') {
    const agentId = agentIdFromEntityIdentifier(ownEntityId(deps), sub);
    const record = agentId === undefined ? undefined : await deps.agent(agentId);
    return record && record.agent_id === agentId ? { kind: 'agent', record } : undefined;
  }
  const row = await findSubordinate(deps, sub).catch((error: unknown) => {
    if (error instanceof OidfError) return undefined;
    throw error;
  });
  return row ? { kind: 'registry', row } : undefined;
}

/** Judges the property `definition` asserts about `subject` at `now`. */
function judge(definition: MarkDefinition, subject: Subject, now: Date): Verdict {
  if (subject.kind === 'registry') return { holds: true, claims: { ward_registry_id: subject.row.id } };
  const { record } = subject;
  const validation = record.trust_validation;
  if (record.status !== 'active') return { holds: false, why: `the agent is ${record.status}` };
  if (validation.state !== 'validated') return { holds: false, why: `its trust validation is ${validation.state}` };
  const lapses = validation.expires_at ? Date.parse(validation.expires_at) : undefined;
  if (lapses !== undefined && lapses <= now.getTime()) return { holds: false, why: 'its certificate has lapsed' };
  const needed = definition.type === 'urn:ward:trust-mark:attested' ? 3 : 1;
  if (validation.level < needed) return { holds: false, why: `its trust level is ${validation.level}, below ${needed}` };
  return {
    holds: true,
    claims: { ward_agent_id: record.agent_id, ward_trust_level: validation.level },
    ...(lapses === undefined ? {} : { notAfter: Math.floor(lapses / 1000) }),
  };
}

/**
 * The trust mark endpoint's answer (OIDF §8.6): a fresh mark of `type` about `sub`, signed with the
 * current key. A type Ward does not issue, a subject this registry does not hold, or a property that
 * does not hold now is `not_found`.
 */
export async function issueTrustMark(deps: OidfDeps, type: string, sub: string): Promise<string> {
  const definition = wardTrustMark(type);
  if (!definition) throw new OidfError('not_found', `This registry issues no trust marks of type ${type}.`);
  // A registry its own parent revoked vouches for nobody any more, agents or registries, as it issues no statements.
  if (deps.revoked()) throw new OidfError('not_found', 'This registry was revoked by its superior and issues no trust marks.');
  const subject = await subjectOf(deps, definition, sub);
  if (!subject) throw new OidfError('not_found', `${sub} is not a ${definition.subject} this registry issues ${type} about.`);
  const verdict = judge(definition, subject, deps.clock.now());
  if (!verdict.holds) throw new OidfError('not_found', `No ${type} for ${sub}: ${verdict.why}.`);
  return signMark(deps, type, sub, verdict);
}

/**
 * The trust mark list endpoint's answer (OIDF §8.5): the entity identifiers this registry would issue a
 * mark of `type` about now (nothing is stored: the same judgement as the trust mark endpoint). For
 * `delegated-registry`, its active children with an address; for the agent types only the one `sub`
 * asked about (the agents of a registry are not listed to anyone who asks: docs/federation.md, "Trust
 * marks", security considerations), so without `sub` that is `invalid_request`. A type Ward does not
 * issue is `not_found`; a registry its parent revoked issues none and lists none.
 */
export async function listTrustMarkedEntities(deps: OidfDeps, type: string, sub: string | undefined): Promise<string[]> {
  const definition = wardTrustMark(type);
  if (!definition) throw new OidfError('not_found', `This registry issues no trust marks of type ${type}.`);
  if (definition.subject === 'agent' && sub === undefined) {
    throw new OidfError('invalid_request', `sub is required for ${type}: this registry does not list its agents.`);
  }
  if (deps.revoked()) return [];
  if (sub === undefined) {
    const ids = (await deps.activeChildren()).flatMap((row) => (row.api_base_url === null ? [] : [entityIdentifier(row.api_base_url)]));
    return [...new Set(ids)];
  }
  const subject = await subjectOf(deps, definition, sub);
  return subject && judge(definition, subject, deps.clock.now()).holds ? [sub] : [];
}

type SigningDeps = Pick<OidfDeps, 'config' | 'clock' | 'signer' | 'baseUrl'>;

function signMark(deps: SigningDeps, type: string, sub: string, verdict: Extract<Verdict, { holds: true }>): Promise<string> {
  const iat = Math.floor(deps.clock.now().getTime() / 1000);
  const exp = Math.min(iat + deps.config.REGISTRY_DELEGATION_TTL_SECONDS, verdict.notAfter ?? Number.POSITIVE_INFINITY);
  const claims: TrustMarkClaims = { iss: ownEntityId(deps), sub, trust_mark_type: type, id: type, iat, exp, ...verdict.claims };
  return deps.signer.sign(claims, TRUST_MARK_TYP);
}

/**
 * The agent marks this registry gives `record` now, for its trust bundle and routing advice: one of
 * every agent type whose property holds, about the agent's entity identifier.
 */
export async function agentTrustMarks(deps: SigningDeps, record: AgentRecord): Promise<TrustMarkEntry[]> {
  const sub = agentEntityIdentifier(ownEntityId(deps), record.agent_id);
  const entries: TrustMarkEntry[] = [];
  for (const definition of WARD_TRUST_MARKS) {
    if (definition.subject !== 'agent') continue;
    const verdict = judge(definition, { kind: 'agent', record }, deps.clock.now());
    if (verdict.holds) entries.push(trustMarkEntry(definition.type, await signMark(deps, definition.type, sub, verdict)));
  }
  return entries;
}

/**
 * What this registry says of `trustMark` now (OIDF §8.4): `invalid` unless it is a compact JWS typed
 * `trust-mark+jwt`, offering no key, naming this registry as `iss` and a type Ward issues, and signed by
 * one of this registry's published keys, and carrying its subject's id (`ward_agent_id` or
 * `ward_registry_id`); `revoked` when this registry was revoked by its parent, the subject is gone,
 * another entity now stands at the subject's identifier, or the property no longer holds, expired or
 * not; `expired` past its `exp` (60 s of skew) otherwise; else `active`.
 */
export async function trustMarkStatus(deps: OidfDeps, trustMark: string): Promise<TrustMarkStatus> {
  const header = readProtectedHeader(trustMark);
  if (!header || header.typ !== TRUST_MARK_TYP || offeredKeyMembers(header).length > 0) return 'invalid';
  await deps.signer.refreshIfStale();
  const now = deps.clock.now();
  const verified = await verifyWithKeySet(trustMark, header, deps.signer.jwks().keys as PublishedJwk[], now);
  if (!verified.ok) return 'invalid';
  const claims = verified.payload as Partial<TrustMarkClaims>;
  const definition = typeof claims.trust_mark_type === 'string' ? wardTrustMark(claims.trust_mark_type) : undefined;
  if (!definition || claims.iss !== ownEntityId(deps) || typeof claims.sub !== 'string' || !Number.isFinite(claims.iat) || !Number.isFinite(claims.exp)) return 'invalid';
  // Every mark this registry signs names its subject by id too: one without it is none of its own.
  const subjectId = definition.subject === 'agent' ? claims.ward_agent_id : claims.ward_registry_id;
  if (typeof subjectId !== 'string') return 'invalid';
  // `revoked` before `expired` (OIDF §8.4 does not order them): what the mark asserted no longer holding
  // is the stronger answer, and it stays true after the mark expires, so a holder can still learn it
  // (a child confirming its own revocation with the last mark it held: docs/decisions.md 98).
  if (await noLongerHolds(deps, definition, claims as TrustMarkClaims, subjectId, now)) return 'revoked';
  if (!((claims.exp as number) * 1000 > now.getTime() - SKEW_MS)) return 'expired';
  return 'active';
}

/** Whether what a well-formed mark of this registry asserts about the entity it names by id fails now. */
async function noLongerHolds(deps: OidfDeps, definition: MarkDefinition, claims: TrustMarkClaims, subjectId: string, now: Date): Promise<boolean> {
  if (deps.revoked()) return true;
  const subject = await subjectOf(deps, definition, claims.sub);
  if (!subject) return true;
  // The mark was about the entity with that id: another one since at the same address (a child revoked,
  // a new registry enrolled at its api_base_url) is not what it vouched for, so its mark stays revoked.
  if (subjectId !== (subject.kind === 'agent' ? subject.record.agent_id : subject.row.id)) return true;
  const verdict = judge(definition, subject, now);
  if (!verdict.holds) return true;
  // A mark that claims more than the agent now has (its level dropped) no longer holds as issued.
  return claims.ward_trust_level !== undefined && (verdict.claims.ward_trust_level ?? 0) < claims.ward_trust_level;
}

/** The status endpoint's signed answer (OIDF §8.4.2, `typ: trust-mark-status-response+jwt`). */
export async function signTrustMarkStatus(deps: OidfDeps, trustMark: string): Promise<string> {
  const status = await trustMarkStatus(deps, trustMark);
  const claims: TrustMarkStatusClaims = { iss: ownEntityId(deps), iat: Math.floor(deps.clock.now().getTime() / 1000), trust_mark: trustMark, status };
  return deps.signer.sign(claims, TRUST_MARK_STATUS_TYP);
}
