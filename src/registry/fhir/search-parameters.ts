/**
 * The FHIR directory's search parameters (docs/fhir.md, "Search"): which each resource type supports,
 * and a query string read the FHIR way — token values as `system|code`, `code` or `|code`, commas
 * for "or", `_count` 1 to 100. An unknown parameter is refused (400) under `Prefer: handling=strict`
 * and ignored under lenient handling, the default (FHIR R4 §3.1.1.5.7); an unsupported modifier
 * (`name:exact`) or a bad value is refused under both.
 */
import { WardError } from '../../core/errors.ts';

export type ResourceType = 'Device' | 'Endpoint' | 'Organization' | 'Provenance';

export type SearchParameterDefinition = { name: string; type: 'token' | 'string' | 'reference'; documentation: string };

/** What each resource type can be searched by: the CapabilityStatement lists exactly these. */
export const SEARCH_PARAMETERS: Record<ResourceType, readonly SearchParameterDefinition[]> = {
  Device: [
    { name: '_id', type: 'token', documentation: "The Device id (the agent's ULID)." },
    { name: 'identifier', type: 'token', documentation: "The agent's registry URI (system urn:ietf:rfc:3986), or the ULID." },
    { name: 'status', type: 'token', documentation: 'active (an active agent) or inactive (suspended, revoked or retired).' },
    { name: 'organization', type: 'reference', documentation: 'The owning Organization (Organization/<id>).' },
    { name: 'device-name', type: 'string', documentation: "The agent's display name; matches where it contains the text, in any case." },
    { name: 'type', type: 'token', documentation: 'ai-agent (every Device here).' },
  ],
  Endpoint: [
    { name: '_id', type: 'token', documentation: 'The Endpoint id.' },
    { name: 'identifier', type: 'token', documentation: 'The registry URI of the agent it belongs to.' },
    { name: 'status', type: 'token', documentation: 'active, suspended, error or off (docs/fhir.md: from the record and the last probe).' },
    { name: 'organization', type: 'reference', documentation: 'The managing Organization (Organization/<id>).' },
    { name: 'name', type: 'string', documentation: 'The endpoint name (the agent name and protocol); matches where it starts with the text, in any case.' },
    { name: 'connection-type', type: 'token', documentation: 'hl7-fhir-rest, hl7v2-mllp (HL7 codes) or a Ward protocol such as mesh-a2a-jsonrpc.' },
  ],
  Organization: [
    { name: '_id', type: 'token', documentation: 'The Organization id.' },
    { name: 'identifier', type: 'token', documentation: "The owner's org_id (system: the registry URI)." },
    { name: 'name', type: 'string', documentation: 'The organisation name; matches where it starts with the text, in any case.' },
  ],
  Provenance: [{ name: 'target', type: 'reference', documentation: 'The Device whose history is asked for (Device/<id>); required.' }],
};

/** Parameters every search takes (besides `_format` and `_pretty`, read for every request). */
const RESULT_PARAMETERS = new Set(['_count', '_page_token', '_summary']);
const ANY_REQUEST = new Set(['_format', '_pretty']);

export type Token = { system?: string | undefined; code: string };

export type SearchRequest = {
  /** Each parameter's values: the outer list is "and" (repeated), the inner "or" (commas). */
  tokens: Map<string, Token[][]>;
  strings: Map<string, string[][]>;
  count: number;
  pageToken?: string | undefined;
  summaryCount: boolean;
  /** The parameters used, as given: the `self` and `next` links repeat them. */
  used: Array<[string, string]>;
};

function badRequest(parameter: string, reason: string): WardError {
  return new WardError('BAD_REQUEST', `The search parameter ${parameter} ${reason}.`, { errors: [{ in: 'query', pointer: `/${parameter}`, reason }] });
}

function token(text: string): Token {
  const bar = text.indexOf('|');
  if (bar < 0) return { code: text };
  return { system: text.slice(0, bar), code: text.slice(bar + 1) };
}

/** `raw` (the query string as Fastify parsed it, repeated names as arrays) as a search on `type`. */
export function parseSearch(type: ResourceType, raw: Record<string, unknown>, strict: boolean): SearchRequest {
  const known = new Map(SEARCH_PARAMETERS[type].map((definition) => [definition.name, definition]));
  const request: SearchRequest = { tokens: new Map(), strings: new Map(), count: 20, summaryCount: false, used: [] };
  for (const [name, value] of Object.entries(raw)) {
    const values = (Array.isArray(value) ? value : [value]).map(String);
    const [base, modifier] = name.split(':', 2) as [string, string | undefined];
    if (ANY_REQUEST.has(name)) continue;
    if (RESULT_PARAMETERS.has(name)) {
      readResultParameter(request, name, values);
      continue;
    }
    const definition = known.get(base);
    if (!definition) {
      if (strict) throw badRequest(name, `is not supported on ${type} (GET /fhir/metadata lists those that are)`);
      continue;
    }
    if (modifier !== undefined) throw badRequest(name, `has a modifier (:${modifier}) this server does not support`);
    for (const text of values) {
      const alternatives = text.split(',').filter((part) => part.length > 0);
      if (alternatives.length === 0) throw badRequest(name, 'has an empty value');
      if (definition.type === 'string') request.strings.set(name, [...(request.strings.get(name) ?? []), alternatives]);
      else request.tokens.set(name, [...(request.tokens.get(name) ?? []), alternatives.map(token)]);
      request.used.push([name, text]);
    }
  }
  return request;
}

function readResultParameter(request: SearchRequest, name: string, values: string[]): void {
  if (values.length > 1) throw badRequest(name, 'is given more than once');
  const value = values[0] as string;
  if (name === '_count') {
    if (!/^\d{1,3}$/.test(value) || Number(value) < 1 || Number(value) > 100) throw badRequest(name, 'must be a whole number from 1 to 100');
    request.count = Number(value);
    request.used.push([name, value]);
  } else if (name === '_page_token') {
    request.pageToken = value;
  } else if (value === 'count') {
    request.summaryCount = true;
    request.used.push([name, value]);
  } else if (value !== 'false') {
    throw badRequest(name, 'supports count and false only');
  }
}

/** The single value a parameter must have where the store filters by it (an "or" of several is refused). */
export function single<T>(values: T[][] | undefined, parameter: string): T | undefined {
  if (values === undefined) return undefined;
  const all = values.flat();
  if (values.length > 1 || all.length > 1) throw badRequest(parameter, 'takes one value here');
  return all[0];
}
