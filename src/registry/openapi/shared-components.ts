import { STATUS_CODES } from 'node:http';
import { isDeepStrictEqual } from 'node:util';
import { ERROR_CODES } from '../../core/errors.ts';

/**
 * Named components for the OpenAPI document (issue 34). The route schemas stay whole: the server
 * validates and serialises with exactly the TypeBox definitions it always did. What is named is the
 * document: every schema whose `title` is a component name (PascalCase) becomes one entry under
 * `components.schemas`, and each place it was written out becomes a `$ref` to it. The title is set
 * once, on the TypeBox definition in src/contract/schemas, so the component and the server's schema
 * cannot drift; two different schemas under one title stop the document being built (a test builds it).
 * Error answers that are nothing but an envelope become `components.responses`, one per status.
 */

type Json = Record<string, unknown>;
type Operation = { responses?: Record<string, Json>; parameters?: Json[]; requestBody?: Json };
export type OpenApiDocument = Json & {
  paths: Record<string, Record<string, Operation>>;
  components?: Json & { schemas?: Record<string, Json>; responses?: Record<string, Json> };
};

const COMPONENT_NAME = /^[A-Z][A-Za-z0-9]*$/;
/** Members that hold values, not schemas: never rewritten. */
const VALUE_MEMBERS = new Set(['enum', 'default', 'example', 'examples', 'const', 'required']);

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Error envelopes answered as shared responses: the schema's component name, and the responses' name prefix. */
const ERROR_BODIES: Record<string, { prefix: string; what: string }> = {
  ErrorEnvelope: { prefix: '', what: 'The error envelope (docs/errors.md)' },
  OperationOutcome: { prefix: 'Fhir', what: 'An OperationOutcome, the Ward code in issue[0].details.coding (docs/fhir.md)' },
};

const STATUS_NAMES: Record<string, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Gone',
  412: 'PreconditionFailed',
  413: 'PayloadTooLarge',
  415: 'UnsupportedMediaType',
  422: 'UnprocessableEntity',
  428: 'PreconditionRequired',
  429: 'TooManyRequests',
  500: 'InternalServerError',
  502: 'BadGateway',
  503: 'ServiceUnavailable',
};

/** The document with its shared schemas and error responses named; the input is not changed. */
export function nameSharedComponents(document: OpenApiDocument): OpenApiDocument {
  const schemas: Record<string, Json> = {};

  function named(node: unknown): unknown {
    if (Array.isArray(node)) return node.map(named);
    if (!isObject(node)) return node;
    const out: Json = {};
    for (const [key, value] of Object.entries(node)) out[key] = VALUE_MEMBERS.has(key) ? value : named(value);
    const title = out.title;
    if (typeof title !== 'string' || !COMPONENT_NAME.test(title)) return out;
    // `Nullable(X)` is X with `nullable: true`: the same component, made nullable where it is used.
    const { nullable, ...core } = out;
    const known = schemas[title];
    if (known === undefined) schemas[title] = core;
    else if (!isDeepStrictEqual(known, core)) throw new Error(`Two different schemas are titled ${title}: give one of them another title.`);
    const ref = { $ref: `#/components/schemas/${title}` };
    return nullable === true ? { nullable: true, allOf: [ref] } : ref;
  }

  const responses: Record<string, Json> = {};
  const paths: OpenApiDocument['paths'] = {};
  for (const [path, item] of Object.entries(document.paths)) {
    paths[path] = {};
    for (const [method, operation] of Object.entries(item)) {
      const renamed = named(operation) as Operation;
      if (renamed.responses) renamed.responses = sharedErrorResponses(renamed.responses, responses);
      paths[path][method] = renamed;
    }
  }
  return {
    ...document,
    paths,
    components: { ...document.components, schemas: sortedByName({ ...document.components?.schemas, ...schemas }), responses: sortedByName(responses) },
  };
}

/** Each answer that is only an error body becomes a `$ref` to one shared response per body and status. */
function sharedErrorResponses(answers: Record<string, Json>, shared: Record<string, Json>): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const [status, answer] of Object.entries(answers)) {
    const body = errorBodyOf(answer);
    const statusName = STATUS_NAMES[status];
    if (!body || !statusName || answer.headers !== undefined) {
      // @fastify/swagger's placeholder for an answer whose schema has no description: the status's own words.
      out[status] = answer.description === 'Default Response' ? { ...answer, description: STATUS_CODES[status] ?? status } : answer;
      continue;
    }
    const name = `${body.prefix}${statusName}`;
    shared[name] ??= { description: describeStatus(Number(status), body.what), content: answer.content };
    out[status] = { $ref: `#/components/responses/${name}` };
  }
  return out;
}

function errorBodyOf(answer: Json): { prefix: string; what: string } | undefined {
  if (!isObject(answer.content)) return undefined;
  const media = Object.values(answer.content);
  if (media.length !== 1 || !isObject(media[0]) || !isObject(media[0].schema)) return undefined;
  const ref = media[0].schema.$ref;
  return typeof ref === 'string' ? ERROR_BODIES[ref.replace('#/components/schemas/', '')] : undefined;
}

/** "Not found: the error envelope; codes AGENT_NOT_FOUND, …", the codes read from the one error table. */
function describeStatus(status: number, what: string): string {
  const codes = Object.entries(ERROR_CODES)
    .filter(([, entry]) => entry.status === status)
    .map(([code]) => code);
  const words = (STATUS_NAMES[status] ?? String(status)).replace(/([a-z])([A-Z])/g, '$1 $2');
  return `${words}. ${what}${codes.length > 0 ? `; codes: ${codes.join(', ')}` : ''}.`;
}

function sortedByName<T>(entries: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(entries).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
