/**
 * Reading the query parameters of the OIDF endpoints (OIDF §8.1.1, §8.2.1, §8.3.1) into what the
 * endpoints need, refusing in OIDF's terms: a missing or repeated single parameter, or an entity
 * identifier that is not an http(s) URL without query or fragment, is `invalid_request`; the list
 * endpoint's trust-mark filters are `unsupported_parameter` (Ward issues no trust marks yet).
 * Parameters OIDF does not define are ignored, as it requires.
 */
import { entityIdentifier } from '../../contract/openid-federation.ts';
import { OidfError } from './oidf-error.ts';
import type { SubordinateFilter } from './subordinate-statements.ts';
import type { ResolveRequest } from './trust-chain-resolver.ts';

/** The query as Fastify parsed it: repeated names as arrays. */
export type RawQuery = Record<string, unknown>;

const bad = (message: string) => new OidfError('invalid_request', message);

function all(query: RawQuery, name: string): string[] {
  const value = query[name];
  if (value === undefined) return [];
  const values = [value].flat();
  if (!values.every((item) => typeof item === 'string')) throw bad(`${name} must be text.`);
  return values as string[];
}

function single(query: RawQuery, name: string): string | undefined {
  const values = all(query, name);
  if (values.length > 1) throw bad(`${name} may be given once.`);
  return values[0];
}

/** `value` as an entity identifier (OIDF §1.2: a URL with a host, no query, no fragment), trailing slash dropped. */
function entityId(value: string, name: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw bad(`${name} is not an entity identifier (a URL).`);
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || !url.hostname || url.search || url.hash || value.includes('#') || value.includes('?')) {
    throw bad(`${name} is not an entity identifier: an http(s) URL with a host and no query or fragment.`);
  }
  return entityIdentifier(value);
}

/** The fetch endpoint's `sub`. */
export function subjectQuery(query: RawQuery): string {
  const sub = single(query, 'sub');
  if (sub === undefined || sub === '') throw bad('sub is required.');
  return entityId(sub, 'sub');
}

/** The list endpoint's filters. */
export function listQuery(query: RawQuery): SubordinateFilter {
  for (const name of ['trust_marked', 'trust_mark_type']) {
    if (query[name] !== undefined) throw new OidfError('unsupported_parameter', `${name}: this registry issues no trust marks yet.`);
  }
  const intermediate = single(query, 'intermediate');
  if (intermediate !== undefined && intermediate !== 'true' && intermediate !== 'false') throw bad('intermediate must be true or false.');
  return { entityTypes: all(query, 'entity_type'), ...(intermediate === undefined ? {} : { intermediate: intermediate === 'true' }) };
}

/** The resolve endpoint's subject, trust anchors (at least one, at most five) and entity types. */
export function resolveQuery(query: RawQuery): ResolveRequest {
  const sub = subjectQuery(query);
  const trustAnchors = all(query, 'trust_anchor').map((anchor) => entityId(anchor, 'trust_anchor'));
  if (trustAnchors.length === 0) throw bad('trust_anchor is required.');
  if (trustAnchors.length > 5) throw bad('trust_anchor may be given at most five times.');
  return { sub, trustAnchors, entityTypes: all(query, 'entity_type') };
}
