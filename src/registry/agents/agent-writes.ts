/**
 * The agent writes of contract §3, each inside a caller's `WriteUnit`: registration, full
 * replacement and status changes, with their events (agent-service.ts opens the units).
 */
import type { CallContext } from '../../core/call-context.ts';
import { WardError } from '../../core/errors.ts';
import { agentUri, newUlid } from '../../core/ids.ts';
import { normaliseJurisdiction } from '../../core/jurisdictions.ts';
import { countOrgAgents, findAgent, hasNameConflict, insertAgent, replaceAgent, replaceSkills, type AgentRow } from './storage/agent-store.ts';
import { clearEndpointHealth } from './storage/endpoint-health-store.ts';
import type { WriteUnit } from '../storage/write-unit.ts';
import type { EventType } from '../../contract/event-types.ts';
import { validateTrustMaterial } from './evidence/trust-validation.ts';
import { toAgentDocument, type AgentInput } from './agent-document.ts';
import { endpointUrlProblems, type EndpointUrlPolicy } from './endpoint-urls.ts';
import { confusableSkeleton } from '../../core/names/confusable-skeleton.ts';
import { refusedNameCharacter } from '../../core/names/name-characters.ts';
import type { AgentDocument, AgentRecord, AgentStatus, TrustValidation } from '../../contract/agent-record.ts';
import { STATUS_ACTIONS, isMutable, nextStatus, type StatusAction } from '../../contract/agent-status.ts';
import { buildRow, toAgentRecord, UNKNOWN_RANK, withHealth, type StoredDocument } from './agent-records.ts';

/** Keys and issuers trust validation may rely on; supplied by the registry at call time. */
export type TrustContext = {
  registryJwks: { keys: Record<string, unknown>[] };
  knownIssuers: ReadonlyArray<{ iss: string; jwks: { keys: Record<string, unknown>[] } }>;
};

/** What agent writes check against that comes from the registry's configuration and keys. */
export type AgentWriteRules = {
  trustContext: () => TrustContext;
  endpointUrls: EndpointUrlPolicy;
};

/** A new agent, active at version 1, its trust material validated. */
export async function registerAgent(
  rules: AgentWriteRules,
  unit: WriteUnit,
  ctx: CallContext,
  input: AgentInput & { jurisdiction: string },
): Promise<AgentRecord> {
  const jurisdiction = normaliseJurisdiction(input.jurisdiction);
  if (!jurisdiction) throw invalidJurisdiction();
  const now = ctx.clock.now();
  const at = now.toISOString();
  const document = toAgentDocument(await claimForCaller(unit, ctx, input));
  assertPublishable(document, rules);
  const id = newUlid(now.getTime());
  const uri = agentUri(jurisdiction, id);
  const trust = await validate(rules.trustContext, document, { agent_id: uri, jurisdiction }, now);
  const row = buildRow(
    { id, uri, jurisdiction, status: 'active', version: 1, created_at: at, updated_at: at, health_rank: UNKNOWN_RANK, name_skeleton: confusableSkeleton(document.display_name) },
    { ...document, trust_validation: trust, status_reason: null },
  );
  // The name check is the insert's own (a unique index): no read first, one statement in the lock.
  if (!(await insertAgent(unit.tx, row, document.capabilities.skills))) throw nameConflict(document);
  emit(unit, 'agent.registered', row, { status: row.status, jurisdiction, display_name: document.display_name }, at);
  emitTrustOutcome(unit, row, trust, at);
  return toAgentRecord(row, []);
}

/**
 * Full replacement of the writable fields. `expectedVersion` is the version the caller's
 * precondition matched (or `*`); a different version now means a concurrent write won.
 */
export async function updateAgent(
  rules: AgentWriteRules,
  unit: WriteUnit,
  ctx: CallContext,
  change: { id: string; expectedVersion: number | '*'; input: AgentInput },
): Promise<AgentRecord> {
  const current = await loadMutable(unit, ctx, change.id);
  if (!isMutable(current.status as AgentStatus)) {
    throw new WardError('AGENT_NOT_MUTABLE', undefined, { agent_id: current.agent_uri, status: current.status });
  }
  assertVersion(current, change.expectedVersion);
  const previous = current.record as StoredDocument;
  const document = toAgentDocument(change.input, previous.owner);
  assertPublishable(document, rules);
  if ((previous.owner.org_id ?? null) !== (document.owner.org_id ?? null)) {
    throw new WardError('VALIDATION_ERROR', 'The owning organisation of an agent cannot change.', {
      errors: [{ in: 'body', pointer: '/owner/org_id', reason: 'must equal the current owner.org_id' }],
    });
  }
  const nameSkeleton = await nameSkeletonForUpdate(unit, document, current, previous);
  const now = ctx.clock.now();
  const at = now.toISOString();
  const trust = await validate(rules.trustContext, document, { agent_id: current.agent_uri, jurisdiction: current.jurisdiction }, now);
  // New endpoints make the old health readings meaningless: back to unknown until probed.
  const row = buildRow(
    { ...current, uri: current.agent_uri, version: current.version + 1, updated_at: at, health_rank: UNKNOWN_RANK, name_skeleton: nameSkeleton },
    { ...document, trust_validation: trust, status_reason: previous.status_reason },
  );
  await replaceAtVersion(unit, row, current);
  await replaceSkills(unit.tx, row, document.capabilities.skills);
  await clearEndpointHealth(unit.tx, row.id);
  emit(unit, 'agent.updated', row, { status: row.status, display_name: document.display_name }, at);
  emitTrustOutcome(unit, row, trust, at);
  return toAgentRecord(row, []);
}

/** A status move of contract §3; `expectedVersion` is the version an If-Match matched, or `*`. */
export async function changeAgentStatus(
  unit: WriteUnit,
  ctx: CallContext,
  change: { id: string; action: StatusAction; reason: string | undefined; expectedVersion: number | '*' },
): Promise<AgentRecord> {
  const { action, reason } = change;
  const rule = STATUS_ACTIONS[action];
  if (rule.reasonRequired && !reason) {
    throw new WardError('VALIDATION_ERROR', `A reason is required to ${action} an agent.`, {
      errors: [{ in: 'body', pointer: '/reason', reason: 'is required' }],
    });
  }
  const current = await loadMutable(unit, ctx, change.id);
  assertVersion(current, change.expectedVersion);
  const from = current.status as AgentStatus;
  const to = nextStatus(from, action);
  if (!to) throw new WardError('INVALID_STATE_TRANSITION', `An agent that is ${from} cannot be ${action}d.`, { from, action });
  const at = ctx.clock.now().toISOString();
  const previous = current.record as StoredDocument;
  const row = buildRow(
    { ...current, uri: current.agent_uri, status: to, version: current.version + 1, updated_at: at },
    { ...previous, status_reason: reason ?? null },
  );
  await replaceAtVersion(unit, row, current);
  emit(unit, rule.event, row, { from, to, reason: reason ?? null }, at);
  return withHealth(unit.tx, row);
}

/**
 * The organisation a non-administrator writes for (contract §7; docs/auth-modes.md "Organisations"):
 * an API key's `org_id`, or a token's `org_id` claim. A credential without one writes no agent, so a
 * token minted without the claim cannot reach across organisations by saying nothing.
 */
function requireCallerOrg(ctx: CallContext): string {
  const orgId = ctx.principal.orgId;
  if (!orgId) throw new WardError('ORG_REQUIRED', 'This credential names no organisation (the token has no org_id claim), so it cannot write agents.');
  return orgId;
}

async function validate(trustContext: () => TrustContext, document: AgentDocument, binding: { agent_id: string; jurisdiction: string }, now: Date) {
  const context = trustContext();
  const result = await validateTrustMaterial({
    trust: document.trust,
    binding: {
      agent_id: binding.agent_id,
      display_name: document.display_name,
      jurisdiction: binding.jurisdiction,
      ...(document.owner.org_id ? { org_id: document.owner.org_id } : {}),
    },
    knownIssuers: context.knownIssuers,
    registryJwks: context.registryJwks,
    now,
  });
  return { state: result.state, level: result.level, checked_at: result.checked_at, errors: result.errors, expires_at: result.expires_at } satisfies TrustValidation;
}

function emit(unit: WriteUnit, type: EventType, row: AgentRow, data: Record<string, unknown>, at: string) {
  unit.emit({ type, subject: row.agent_uri, occurred_at: at, data: { agent_id: row.agent_uri, version: row.version, ...data } });
}

function emitTrustOutcome(unit: WriteUnit, row: AgentRow, trust: TrustValidation, at: string) {
  if (trust.state === 'validated') emit(unit, 'agent.trust_validated', row, { level: trust.level }, at);
  else emit(unit, 'agent.trust_failed', row, { error_codes: trust.errors.map((e) => e.code) }, at);
}

/**
 * What a record publishes must be safe to show and to follow: names without characters that make
 * them read as something else (core/names/name-characters.ts), endpoints' URLs of the schemes their
 * protocols allow (endpoint-urls.ts). Every problem is listed at once, each with its pointer.
 */
function assertPublishable(document: AgentDocument, rules: AgentWriteRules): void {
  const names: Array<[string, string | undefined]> = [
    ['/display_name', document.display_name],
    ['/owner/org_name', document.owner.org_name],
  ];
  const errors = [
    ...names.flatMap(([pointer, name]) => {
      const reason = name === undefined ? undefined : refusedNameCharacter(name);
      return reason ? [{ in: 'body', pointer, reason }] : [];
    }),
    ...endpointUrlProblems(document.endpoints, rules.endpointUrls).map((problem) => ({ in: 'body', ...problem })),
  ];
  if (errors.length > 0) throw new WardError('VALIDATION_ERROR', 'The request failed validation.', { errors });
}

/**
 * The skeleton an updated record keeps: its new name's, unless another live agent of the organisation
 * has the name or one that looks the same (AGENT_CONFLICT). A record without one (a look-alike kept
 * by migration 019) keeps none while its name does not change; an older build's row gets its own.
 */
async function nameSkeletonForUpdate(unit: WriteUnit, document: AgentDocument, current: AgentRow, previous: StoredDocument): Promise<string | null> {
  const skeleton = confusableSkeleton(document.display_name);
  const orgId = document.owner.org_id;
  if (!orgId || !(await hasNameConflict(unit.tx, orgId, { displayName: document.display_name, skeleton }, current.id))) return skeleton;
  if (current.name_skeleton === null && previous.display_name === document.display_name) return null;
  throw nameConflict(document);
}

function nameConflict(document: AgentDocument): WardError {
  return new WardError('AGENT_CONFLICT', undefined, { org_id: document.owner.org_id, display_name: document.display_name });
}

function assertVersion(current: AgentRow, expectedVersion: number | '*'): void {
  if (expectedVersion !== '*' && current.version !== expectedVersion) {
    throw new WardError('VERSION_CONFLICT', undefined, { agent_id: current.agent_uri, current_version: current.version });
  }
}

/** Writes `row` over `current` unless a concurrent write moved it on first. */
async function replaceAtVersion(unit: WriteUnit, row: AgentRow, current: AgentRow): Promise<void> {
  if (!(await replaceAgent(unit.tx, row, current.version, current.record))) {
    throw new WardError('VERSION_CONFLICT', undefined, { agent_id: current.agent_uri });
  }
}

async function loadMutable(unit: WriteUnit, ctx: CallContext, id: string): Promise<AgentRow> {
  const row = await findAgent(unit.tx, id);
  if (!row) throw new WardError('AGENT_NOT_FOUND', undefined, { agent_id: id });
  if (ctx.scopes.has('registry:admin')) return row;
  if (requireCallerOrg(ctx) !== row.org_id) throw new WardError('ORG_MISMATCH', undefined, { org_id: row.org_id });
  return row;
}

/**
 * Contract §7: an agent registered with an organisation's key belongs to that organisation
 * (`owner.org_id` defaults to it; another one is refused), within its tier's agent limit.
 */
async function claimForCaller(unit: WriteUnit, ctx: CallContext, input: AgentInput): Promise<AgentInput> {
  const orgId = ctx.scopes.has('registry:admin') ? ctx.principal.orgId : requireCallerOrg(ctx);
  if (!orgId) return input;
  if (input.owner?.org_id !== undefined && input.owner.org_id !== orgId) {
    throw new WardError('ORG_MISMATCH', "An organisation's key registers agents for that organisation only.", { org_id: orgId });
  }
  const max = ctx.pricingTier?.limits.max_agents;
  if (max !== null && max !== undefined && (await countOrgAgents(unit.tx, orgId)) >= max) {
    throw new WardError('TIER_LIMIT_EXCEEDED', undefined, { max_agents: max, tier: ctx.pricingTier?.name });
  }
  return { ...input, owner: { ...(input.owner ?? {}), org_id: orgId } };
}

function invalidJurisdiction(): WardError {
  return new WardError('VALIDATION_ERROR', 'jurisdiction is not an ISO 3166-1 alpha-2 country code.', {
    errors: [{ in: 'body', pointer: '/jurisdiction', reason: 'must be an assigned ISO 3166-1 alpha-2 code' }],
  });
}
