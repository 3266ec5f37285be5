import { createHash } from 'node:crypto';
import type { AgentRecord, EndpointHealth, PurposeOfUse, TokenBinding } from '../../../contract/agent-record.ts';
import { acceptsCaller, acceptsPurpose, hasFeatures } from '../agent-filters.ts';
import { protocolsMatching } from '../../../core/vocabulary.ts';

/** What the caller needs from an endpoint (the route request, normalised). */
export type RouteRequirements = {
  protocol?: string;
  allowedZones?: readonly string[];
  denyCrossZone: boolean;
  tokenBinding?: TokenBinding;
  requiredFeatures: readonly string[];
  purpose?: PurposeOfUse;
  callerJurisdiction?: string;
};

export const EXCLUSION_REASONS = ['protocol', 'residency', 'token_binding', 'features', 'purpose', 'cross_border'] as const;
export type ExclusionReason = (typeof EXCLUSION_REASONS)[number];

type EndpointView = AgentRecord['endpoints'][number];

export type EndpointVerdict = {
  index: number;
  endpoint: EndpointView;
  reasons: ExclusionReason[];
  /** The health used for the choice: a reading older than the staleness limit counts as unknown. */
  health: EndpointHealth['status'];
  /** Outside `allowed_zones` but tolerated because `deny_cross_zone` is false. */
  outOfZone: boolean;
};

/**
 * Judges every endpoint of an agent against the requirements (contract §4). Agent-wide conditions
 * (token binding, features, purpose, cross-border policy) exclude every endpoint with the same reason;
 * protocol and residency are per endpoint. `allowed_zones` drops endpoints outside them when
 * `deny_cross_zone` is true, and only demotes them otherwise.
 */
export function judgeEndpoints(
  record: AgentRecord,
  requirements: RouteRequirements,
  options: { now: Date; staleAfterMs: number },
): EndpointVerdict[] {
  const agentReasons: ExclusionReason[] = [];
  if (requirements.tokenBinding && record.capabilities.token_binding !== requirements.tokenBinding) agentReasons.push('token_binding');
  if (!hasFeatures(record, requirements.requiredFeatures)) agentReasons.push('features');
  if (requirements.purpose && !acceptsPurpose(record, requirements.purpose)) agentReasons.push('purpose');
  if (!acceptsCaller(record, requirements.callerJurisdiction)) agentReasons.push('cross_border');
  const zones = requirements.allowedZones && requirements.allowedZones.length > 0 ? requirements.allowedZones : undefined;

  return record.endpoints.map((endpoint, index) => {
    const reasons = [...agentReasons];
    if (requirements.protocol && !protocolsMatching(requirements.protocol).includes(endpoint.protocol)) reasons.push('protocol');
    const inZone = !zones || (endpoint.region !== undefined && zones.includes(endpoint.region));
    if (!inZone && requirements.denyCrossZone) reasons.push('residency');
    return { index, endpoint, reasons, health: effectiveHealth(endpoint.health, options), outOfZone: !inZone };
  });
}

function effectiveHealth(health: EndpointHealth, options: { now: Date; staleAfterMs: number }): EndpointHealth['status'] {
  if (health.checked_at === null) return 'unknown';
  const age = options.now.getTime() - Date.parse(health.checked_at);
  return age > options.staleAfterMs ? 'unknown' : health.status;
}

/**
 * Orders the eligible endpoints for failover: never an unhealthy one while another remains, then
 * in-zone before out-of-zone, then lowest priority; within one priority, a weighted random order
 * drawn from `seed` (so the same request gets the same answer). The first is the one to use.
 */
export function orderForFailover(verdicts: readonly EndpointVerdict[], seed: string): EndpointVerdict[] {
  const random = lazily(() => seededRandom(seed));
  const groups = new Map<number, EndpointVerdict[]>();
  for (const verdict of verdicts) {
    if (verdict.reasons.length > 0) continue;
    const key = groupRank(verdict);
    const group = groups.get(key);
    if (group) group.push(verdict);
    else groups.set(key, [verdict]);
  }
  const ordered: EndpointVerdict[] = [];
  const keys = [...groups.keys()].sort((a, b) => a - b);
  for (const key of keys) ordered.push(...weightedShuffle(groups.get(key) as EndpointVerdict[], random));
  return ordered;
}

/**
 * The failover group of an endpoint as one number that sorts like (unhealthy, out of zone, priority).
 * The record's schema bounds a priority to 0–1 000 000, far below 2^40, so each flag outweighs any priority.
 */
function groupRank(verdict: EndpointVerdict): number {
  return (verdict.health === 'unhealthy' ? 2 ** 41 : 0) + (verdict.outOfZone ? 2 ** 40 : 0) + verdict.endpoint.priority;
}

/** `make()` on the first call, then what it made: a lone endpoint in every group needs no random draw, so no seed is hashed. */
function lazily(make: () => () => number): () => number {
  let made: (() => number) | undefined;
  return () => (made ??= make())();
}

/** Draws without replacement, each pick in proportion to the endpoint's weight. */
function weightedShuffle(items: EndpointVerdict[], random: () => number): EndpointVerdict[] {
  if (items.length === 1) return items;
  const pool = [...items].sort((a, b) => a.index - b.index);
  const out: EndpointVerdict[] = [];
  while (pool.length > 0) {
    const total = pool.reduce((sum, v) => sum + v.endpoint.weight, 0);
    let ticket = random() * total;
    let pick = pool.length - 1;
    for (let i = 0; i < pool.length; i += 1) {
      ticket -= (pool[i] as EndpointVerdict).endpoint.weight;
      if (ticket < 0) {
        pick = i;
        break;
      }
    }
    out.push(...pool.splice(pick, 1));
  }
  return out;
}

/** A small deterministic generator (mulberry32) seeded from the SHA-256 of `seed`. */
export function seededRandom(seed: string): () => number {
  let state = createHash('sha256').update(seed).digest().readUInt32BE(0);
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
