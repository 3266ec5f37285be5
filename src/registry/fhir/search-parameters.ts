/**
 * The FHIR directory's search parameters (docs/fhir.md, "Search"): which each resource type supports,
 * and a query string read the FHIR way — token values as `system|code`, `code` or `|code`, commas
 * for "or", `_count` 1 to 100. An unknown parameter is refused (400) under `Prefer: handling=strict`
 * and ignored under lenient handling, the default (FHIR R4 §3.1.1.5.7); an unsupported modifier
 * (`name:exact`) or a bad value is refused under both.
 */
import { WardError } from '../../core/errors.ts';

export type ResourceType = 'Device' | 'Endpoint' | 'Organization' | 'Provenance';

export type SearchParameterDefinition = {
  name: string;
  type: 'token' | 'string' | 'reference' | 'date';
  documentation: string;
};

/** A definition maker for parameters of one type: `tokenParam('status', 'what it matches')`. */
const parameterOf =
  (type: SearchParameterDefinition['type']) =>
  (name: string, documentation: string): SearchParameterDefinition => ({ name, type, documentation });
const tokenParam = parameterOf('token');
const stringParam = parameterOf('string');
const referenceParam = parameterOf('reference');
const dateParam = parameterOf('date');

/** What Device and Endpoint share: both are found by the agent they stand for and by its owner. */
function agentParameters(documentation: { id: string; identifier: string; status: string; organization: string }): SearchParameterDefinition[] {
  return [
    tokenParam('_id', documentation.id),
    tokenParam('identifier', documentation.identifier),
    tokenParam('status', documentation.status),
    referenceParam('organization', documentation.organization),
  ];
}

/** What each resource type can be searched by: the CapabilityStatement lists exactly these. */
export const SEARCH_PARAMETERS: Record<ResourceType, readonly SearchParameterDefinition[]> = {
  Device: [
    ...agentParameters({
      id: "The Device id (the agent's ULID).",
      identifier: "The agent's registry URI (system urn:ietf:rfc:3986), or the ULID.",
      status: 'active (an active agent) or inactive (suspended, revoked or retired).',
      organization: 'The owning Organization (Organization/<id>).',
    }),
    stringParam('device-name', "The agent's display name; matches where it contains the text, in any case."),
    tokenParam('type', 'ai-agent (every Device here).'),
    tokenParam('skill', 'A skill discovery matches (consent.verify): the active, trust-validated agents that have it, ranked as GET /v1/discover ranks them, at most the first 1000.'),
    dateParam('_lastUpdated', 'When the record last changed (eq, ne, gt, ge, lt, le, sa, eb prefixes).'),
  ],
  Endpoint: [
    ...agentParameters({
      id: 'The Endpoint id.',
      identifier: 'The registry URI of the agent it belongs to.',
      status: 'active, suspended, error or off (docs/fhir.md: from the record and the last probe).',
      organization: 'The managing Organization (Organization/<id>).',
    }),
    stringParam('name', 'The endpoint name (the agent name and protocol); matches where it starts with the text, in any case.'),
    tokenParam('connection-type', 'hl7-fhir-rest, hl7v2-mllp (HL7 codes) or a Ward protocol such as mesh-a2a-jsonrpc.'),
    dateParam('_lastUpdated', "When the agent's record last changed (eq, ne, gt, ge, lt, le, sa, eb prefixes)."),
  ],
  Organization: [
    tokenParam('_id', 'The Organization id.'),
    tokenParam('identifier', "The owner's org_id (system: the registry URI)."),
    stringParam('name', 'The organisation name; matches where it starts with the text, in any case.'),
  ],
  Provenance: [referenceParam('target', 'Required: the Device whose history is asked for (Device/<id>), or the address of a console page (an http(s) URL): the computer-use runs that opened it.')],
};

/** Parameters every search takes (besides `_format` and `_pretty`, read for every request). */
const RESULT_PARAMETERS = new Set(['_count', '_page_token', '_summary']);

/** The `_include` values each type answers: the owner of what was found, once per page. */
export const INCLUDES: Record<ResourceType, readonly string[]> = {
  Device: ['Device:organization'],
  Endpoint: ['Endpoint:organization'],
  Organization: [],
  Provenance: [],
};
/**
 * The `_revinclude` values each type answers: an Organization's endpoints, at most
 * REVINCLUDE_LIMIT per Organization (an outcome entry says where more were left out).
 */
export const REVINCLUDES: Record<ResourceType, readonly string[]> = {
  Device: [],
  Endpoint: [],
  Organization: ['Endpoint:organization'],
  Provenance: [],
};
export const REVINCLUDE_LIMIT = 100;
const ANY_REQUEST = new Set(['_format', '_pretty']);

export type Token = { system?: string | undefined; code: string };

export type SearchRequest = {
  /** Each parameter's values: the outer list is "and" (repeated), the inner "or" (commas). */
  tokens: Map<string, Token[][]>;
  strings: Map<string, string[][]>;
  /** Date parameters: each value a range test (`_lastUpdated=ge2026-01-01`). */
  dates: Map<string, DateTest[][]>;
  /** Whether the owners of the page's resources are included (`_include=Endpoint:organization`). */
  includeOrganizations: boolean;
  /** Whether the endpoints of the page's Organizations are included (`_revinclude=Endpoint:organization`). */
  revincludeEndpoints: boolean;
  count: number;
  pageToken?: string | undefined;
  summaryCount: boolean;
  /** The parameters used, as given: the `self` and `next` links repeat them. */
  used: Array<[string, string]>;
};

/** A search with no parameters: every resource, 20 a page. */
export function emptySearch(): SearchRequest {
  return {
    tokens: new Map(),
    strings: new Map(),
    dates: new Map(),
    includeOrganizations: false,
    revincludeEndpoints: false,
    count: 20,
    summaryCount: false,
    used: [],
  };
}

function badRequest(parameter: string, reason: string): WardError {
  return new WardError('BAD_REQUEST', `The search parameter ${parameter} ${reason}.`, {
    errors: [{ in: 'query', pointer: `/${parameter}`, reason }],
  });
}

function token(text: string): Token {
  const bar = text.indexOf('|');
  if (bar < 0) return { code: text };
  return { system: text.slice(0, bar), code: text.slice(bar + 1) };
}

/** `raw` (the query string as Fastify parsed it, repeated names as arrays) as a search on `type`. */
export function parseSearch(
  type: ResourceType,
  raw: Record<string, unknown>,
  strict: boolean,
): SearchRequest {
  const known = new Map(SEARCH_PARAMETERS[type].map((definition) => [definition.name, definition]));
  const request = emptySearch();
  for (const [name, value] of Object.entries(raw)) {
    const values = (Array.isArray(value) ? value : [value]).map(String);
    const [base, modifier] = name.split(':', 2) as [string, string | undefined];
    if (ANY_REQUEST.has(name)) continue;
    if (RESULT_PARAMETERS.has(name)) {
      readResultParameter(request, name, values);
      continue;
    }
    if (name === '_include' || name === '_revinclude') {
      readIncludes(type, request, values, strict, name);
      continue;
    }
    const definition = known.get(base);
    if (!definition) {
      if (strict)
        throw badRequest(name, `is not supported on ${type} (GET /fhir/metadata lists those that are)`);
      continue;
    }
    if (modifier !== undefined)
      throw badRequest(name, `has a modifier (:${modifier}) this server does not support`);
    for (const text of values) {
      const alternatives = text.split(',').filter((part) => part.length > 0);
      if (alternatives.length === 0) throw badRequest(name, 'has an empty value');
      if (definition.type === 'string')
        request.strings.set(name, [...(request.strings.get(name) ?? []), alternatives]);
      else if (definition.type === 'date')
        request.dates.set(name, [
          ...(request.dates.get(name) ?? []),
          alternatives.map((alternative) => dateTest(name, alternative)),
        ]);
      else request.tokens.set(name, [...(request.tokens.get(name) ?? []), alternatives.map(token)]);
      request.used.push([name, text]);
    }
  }
  return request;
}

function readIncludes(type: ResourceType, request: SearchRequest, values: string[], strict: boolean, name: '_include' | '_revinclude'): void {
  for (const value of values) {
    // `Endpoint:organization:Organization` names the target type too; it is the only one.
    const include = value.replace(/:Organization$/, '');
    if (!(name === '_include' ? INCLUDES : REVINCLUDES)[type].includes(include)) {
      if (strict)
        throw badRequest(
          name,
          `${value.slice(0, 60)} is not supported on ${type} (GET /fhir/metadata lists what is)`,
        );
      continue;
    }
    if (name === '_include') request.includeOrganizations = true;
    else request.revincludeEndpoints = true;
    request.used.push([name, value]);
  }
}

/** A date comparison: `test(instant)` for an instant in milliseconds. */
export type DateTest = (instant: number) => boolean;

const DATE =
  /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})?)?)?)?$/;

/**
 * A FHIR date search value (R4 §3.1.1.4.2) as a test: the value stands for the range its precision
 * spans (`2026-03` is all of March), and the prefix compares an instant with that range.
 */
function dateTest(parameter: string, text: string): DateTest {
  const prefix = /^(eq|ne|gt|lt|ge|le|sa|eb)/.exec(text)?.[1] ?? 'eq';
  const value = text.slice(/^(eq|ne|gt|lt|ge|le|sa|eb)/.test(text) ? 2 : 0);
  const match = DATE.exec(value);
  if (!match)
    throw badRequest(parameter, 'must be a FHIR date or dateTime, optionally after a prefix (ge2026-01-01)');
  const [, year, month, day, hour, minute, second, fraction, zone] = match;
  if (hour !== undefined && zone === undefined)
    throw badRequest(parameter, 'needs a time zone when it has a time (Z or +hh:mm)');
  const start = Date.parse(
    `${year}-${month ?? '01'}-${day ?? '01'}T${hour ?? '00'}:${minute ?? '00'}:${second ?? '00'}.${(fraction ?? '0').padEnd(3, '0').slice(0, 3)}${zone ?? 'Z'}`,
  );
  if (Number.isNaN(start)) throw badRequest(parameter, 'is not a date that exists');
  const end = endOf(start, { month, day, hour, second, fraction });
  switch (prefix) {
    case 'ne':
      return (t) => t < start || t >= end;
    case 'gt':
    case 'sa':
      return (t) => t >= end;
    case 'lt':
    case 'eb':
      return (t) => t < start;
    case 'ge':
      return (t) => t >= start;
    case 'le':
      return (t) => t < end;
    default:
      return (t) => t >= start && t < end;
  }
}

/** The end (exclusive) of the range a value of this precision spans from `start`. */
function endOf(
  start: number,
  given: {
    month?: string | undefined;
    day?: string | undefined;
    hour?: string | undefined;
    second?: string | undefined;
    fraction?: string | undefined;
  },
): number {
  const date = new Date(start);
  if (given.month === undefined) return Date.UTC(date.getUTCFullYear() + 1, 0, 1);
  if (given.day === undefined) return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
  if (given.hour === undefined) return start + 86_400_000;
  if (given.second === undefined) return start + 60_000;
  if (given.fraction === undefined) return start + 1000;
  return start + 1;
}

function readResultParameter(request: SearchRequest, name: string, values: string[]): void {
  if (values.length > 1) throw badRequest(name, 'is given more than once');
  const value = values[0] as string;
  if (name === '_count') {
    if (!/^\d{1,3}$/.test(value) || Number(value) < 1 || Number(value) > 100)
      throw badRequest(name, 'must be a whole number from 1 to 100');
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
