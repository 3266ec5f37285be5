import { featuresOf } from '../../core/agent-capabilities.ts';
import { protocolsMatching } from '../../core/vocabulary.ts';
import type { AgentRecord } from '../../contract/agent-record.ts';

/**
 * The per-agent predicates of discovery and routing (contract §4). Pure functions over a record so
 * discovery, routing and their tests share one definition of each filter.
 */

export function hasFeatures(record: AgentRecord, required: readonly string[]): boolean {
  if (required.length === 0) return true;
  const features = featuresOf(record.capabilities);
  return required.every((feature) => features.has(feature));
}

/** A protocol (or one of its aliases' family, vocabulary.ts) matches the declared protocols or any endpoint's protocol. */
export function speaksProtocol(record: AgentRecord, protocol: string): boolean {
  const family = protocolsMatching(protocol);
  return record.capabilities.protocols.some((declared) => family.includes(declared)) || record.endpoints.some((e) => family.includes(e.protocol));
}

export function hasRegion(record: AgentRecord, region: string): boolean {
  return record.endpoints.some((e) => e.region === region);
}

/**
 * Whether the agent accepts a purpose of use: an agent whose `policy_tags.purpose_of_use` lists
 * purposes accepts only those; an agent without such a list states no restriction.
 */
export function acceptsPurpose(record: AgentRecord, purpose: string): boolean {
  const purposes = record.policy_tags.purpose_of_use;
  return !Array.isArray(purposes) || purposes.includes(purpose);
}

/**
 * Cross-border policy for a caller's jurisdiction: `policy_tags.cross_border: false` refuses callers
 * from other jurisdictions; `policy_tags.allowed_caller_jurisdictions` lists the ones accepted.
 */
export function acceptsCaller(record: AgentRecord, callerJurisdiction: string | undefined): boolean {
  if (!callerJurisdiction) return true;
  const allowed = record.policy_tags.allowed_caller_jurisdictions;
  if (Array.isArray(allowed)) return allowed.map((j) => String(j).toUpperCase()).includes(callerJurisdiction);
  if (record.policy_tags.cross_border === false) return callerJurisdiction === record.jurisdiction;
  return true;
}
