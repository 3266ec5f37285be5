import { monotonicFactory, isValid as isValidUlid } from 'ulidx';
import { normaliseJurisdiction } from './jurisdictions.ts';

const nextUlid = monotonicFactory();

/** A new ULID; monotonic within the process so that ids made in the same millisecond still sort. */
export function newUlid(now: number = Date.now()): string {
  return nextUlid(now);
}

/** An organisation id (`owner.org_id`, an API key's `org_id`, a token's `org_id` claim). */
export const ORG_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$';

export function isOrgId(value: unknown): value is string {
  return typeof value === 'string' && new RegExp(ORG_ID_PATTERN).test(value);
}

export type AgentUri = `registry://${string}/agents/${string}`;

/** `registry://<jurisdiction lower-case>/agents/<ULID>` (contract, Words). */
export function agentUri(jurisdiction: string, ulid: string): AgentUri {
  return `registry://${jurisdiction.toLowerCase()}/agents/${ulid}`;
}

/** `registry://<jurisdiction lower-case>/registries/<name>`. */
export function registryUri(jurisdiction: string, name: string): string {
  return `registry://${jurisdiction.toLowerCase()}/registries/${name}`;
}

const AGENT_URI = /^registry:\/\/([a-zA-Z]{2})\/agents\/([0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{26})$/;

/**
 * Resolves the `{id}` of an agent path: either the bare ULID or the whole agent URI (percent-decoded
 * by the router already). Returns the upper-case ULID, or `undefined` when the id is neither.
 */
export function parseAgentId(id: string): { ulid: string; jurisdiction?: string } | undefined {
  if (isValidUlid(id)) return { ulid: id.toUpperCase() };
  const match = AGENT_URI.exec(id);
  if (!match) return undefined;
  const jurisdiction = normaliseJurisdiction(match[1] as string);
  if (!jurisdiction) return undefined;
  return { ulid: (match[2] as string).toUpperCase(), jurisdiction };
}
