/**
 * Reading the query parameters of the OIDF endpoints (OIDF §8.1.1, §8.2.1, §8.3.1) into what the
 * endpoints need, refusing in OIDF's terms: a missing or repeated single parameter, or an entity
 * identifier that is not an http(s) URL without query or fragment, is `invalid_request`.
 * Parameters OIDF does not define are ignored, as it requires.
 */
import { entityIdentifier } from '../../../contract/openid-federation.ts';
import { OidfError } from '../../../client/oidf/oidf-error.ts';
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

/** The list endpoint's filters, the trust-mark ones included (OIDF §8.2.1). */
export function listQuery(query: RawQuery): SubordinateFilter {
  const intermediate = single(query, 'intermediate');
  if (intermediate !== undefined && intermediate !== 'true' && intermediate !== 'false') throw bad('intermediate must be true or false.');
  const trustMarked = single(query, 'trust_marked');
  if (trustMarked !== undefined && trustMarked !== 'true' && trustMarked !== 'false') throw bad('trust_marked must be true or false.');
  const trustMarkType = single(query, 'trust_mark_type');
  return {
    entityTypes: all(query, 'entity_type'),
    ...(intermediate === undefined ? {} : { intermediate: intermediate === 'true' }),
    ...(trustMarked === 'true' ? { trustMarked: true } : {}),
    ...(trustMarkType === undefined ? {} : { trustMarkType }),
  };
}

/** The trust mark endpoint's `trust_mark_type` and `sub` (OIDF §8.6.1), both required. */
export function trustMarkQuery(query: RawQuery): { type: string; sub: string } {
  const type = single(query, 'trust_mark_type');
  if (type === undefined || type === '') throw bad('trust_mark_type is required.');
  return { type, sub: subjectQuery(query) };
}

/** The trust mark list endpoint's `trust_mark_type` (required) and `sub` (optional) (OIDF §8.5.1). */
export function trustMarkListQuery(query: RawQuery): { type: string; sub?: string } {
  const type = single(query, 'trust_mark_type');
  if (type === undefined || type === '') throw bad('trust_mark_type is required.');
  const sub = single(query, 'sub');
  return sub === undefined ? { type } : { type, sub: entityId(sub, 'sub') };
}

/** The status endpoint's form (OIDF §8.4.1): one `trust_mark`, sent as `application/x-www-form-urlencoded`. */
export function trustMarkStatusForm(contentType: string | undefined, body: unknown): string {
  const form = (contentType ?? '').split(';')[0]?.trim().toLowerCase() === 'application/x-www-form-urlencoded';
  if (!form || typeof body !== 'object' || body === null) throw bad('The request is a form (application/x-www-form-urlencoded) with trust_mark.');
  const mark = single(body as RawQuery, 'trust_mark');
  if (mark === undefined || mark === '') throw bad('trust_mark is required.');
  return mark;
}

/** The resolve endpoint's subject, trust anchors (at least one, at most five) and entity types. */
export function resolveQuery(query: RawQuery): ResolveRequest {
  const sub = subjectQuery(query);
  const trustAnchors = all(query, 'trust_anchor').map((anchor) => entityId(anchor, 'trust_anchor'));
  if (trustAnchors.length === 0) throw bad('trust_anchor is required.');
  if (trustAnchors.length > 5) throw bad('trust_anchor may be given at most five times.');
  return { sub, trustAnchors, entityTypes: all(query, 'entity_type') };
}
