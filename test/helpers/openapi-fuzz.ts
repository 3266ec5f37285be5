/**
 * Requests for property-based fuzzing, drawn from the registry's own OpenAPI document (issue 19, item
 * 2): for each operation, path parameters, query, headers and a body that are either valid by the
 * schema, mutated from valid (a member dropped, a type changed, an unknown member, an enormous value),
 * or arbitrary bytes. fast-check does the drawing and the shrinking; this file only maps schemas to
 * arbitraries, for the JSON Schema subset TypeBox emits.
 */
import fc from 'fast-check';
import { dereference } from './openapi-document.ts';

type Schema = Record<string, any>;

export type Operation = {
  readonly method: string;
  readonly path: string;
  readonly pathParams: readonly string[];
  readonly query: ReadonlyArray<{ name: string; schema: Schema }>;
  readonly headers: readonly string[];
  readonly body?: Schema;
};

export type FuzzRequest = {
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly payload?: string;
  readonly label: string;
};

/** The operations of an OpenAPI 3 document, without `skip` (streams, browser-driving routes); shared components written out. */
export function operationsOf(document: Schema, skip: (method: string, path: string, op: Schema) => boolean): Operation[] {
  const doc = dereference(document);
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries<Schema>(doc.paths)) {
    for (const [method, op] of Object.entries<Schema>(item)) {
      if (skip(method.toUpperCase(), path, op)) continue;
      const params: Schema[] = op.parameters ?? [];
      operations.push({
        method: method.toUpperCase(),
        path,
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        query: params.filter((p) => p.in === 'query').map((p) => ({ name: p.name, schema: p.schema ?? {} })),
        headers: params.filter((p) => p.in === 'header').map((p) => p.name),
        ...(op.requestBody?.content?.['application/json']?.schema ? { body: op.requestBody.content['application/json'].schema } : {}),
      });
    }
  }
  return operations;
}

const nasty = fc.constantFrom(
  '',
  ' ',
  '%zz',
  '%00',
  '\u0000',
  '../../etc/passwd',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  '\u202e\u200b',
  'NHS 943 476 5919',
  'x'.repeat(5000),
  '💉'.repeat(300),
  '{"a":',
  'null',
  '-1',
  '1e309',
  'registry://gb/agents/01JXXXXXXXXXXXXXXXXXXXXXXX',
);

const anyString = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 40 }), nasty);

/** A value valid for `schema` (as far as this subset goes). */
export function valid(schema: Schema, depth = 0): fc.Arbitrary<unknown> {
  if (depth > 4) return fc.constant(null);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(alternatives) && alternatives.length > 0) return fc.oneof(...alternatives.map((s: Schema) => valid(s, depth + 1)));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string':
      if (schema.format === 'date-time') return fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString());
      if (schema.format === 'uri') return fc.constantFrom('https://agent.example.org/a2a', 'https://consent.example.org/jwks.json', 'http://127.0.0.1:9/x');
      if (schema.format === 'email') return fc.emailAddress();
      if (schema.pattern === '^[A-Z]{2}$' || /jurisdiction/i.test(schema.description ?? '')) return fc.constantFrom('GB', 'FR', 'US', 'DE');
      return fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 30, 30) });
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -5, max: Math.min(schema.maximum ?? 1000, 1_000_000) });
    case 'number':
      return fc.double({ min: schema.minimum ?? -5, max: schema.maximum ?? 1000, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(valid(schema.items ?? {}, depth + 1), { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 3, 3) });
    case 'object': {
      const properties: Record<string, Schema> = schema.properties ?? {};
      const required = new Set<string>(schema.required ?? []);
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [name, property] of Object.entries(properties)) record[name] = valid(property, depth + 1);
      return fc.record(record, { requiredKeys: [...required].filter((name) => name in properties) });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** A value valid for `schema`, then possibly broken in one of the ways a careless client would. */
export function mutated(schema: Schema): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 3, arbitrary: valid(schema) },
    {
      weight: 2,
      arbitrary: fc.tuple(valid(schema), fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 })).map(([value, key, junk]) => {
        if (typeof value !== 'object' || value === null || Array.isArray(value)) return junk;
        const copy: Record<string, unknown> = { ...value };
        const keys = Object.keys(copy);
        if (keys.length > 0 && key.length % 3 === 0) delete copy[keys[key.length % keys.length] as string];
        else if (keys.length > 0 && key.length % 3 === 1) copy[keys[key.length % keys.length] as string] = junk;
        else copy[key || 'unexpected'] = junk;
        return copy;
      }),
    },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  );
}

function queryValue(schema: Schema): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: valid(schema).map((value) => (typeof value === 'string' ? value : JSON.stringify(value))) },
    { weight: 2, arbitrary: anyString },
  );
}

const encodeSegment = (value: string, raw: boolean) => (raw ? value.replace(/[/?#\s]/g, '') : encodeURIComponent(value));

/** One request for `operation`; `ids` are values that name real records (so some requests reach them). */
export function requestFor(operation: Operation, ids: readonly string[]): fc.Arbitrary<FuzzRequest> {
  const idValue = ids.length > 0 ? fc.oneof(fc.constantFrom(...ids), anyString) : anyString;
  const pathParams = fc.tuple(...operation.pathParams.map(() => fc.tuple(idValue, fc.boolean())));
  const query = fc.subarray([...operation.query]).chain((chosen) => fc.tuple(...chosen.map((param) => queryValue(param.schema).map((value) => [param.name, value] as const))));
  // Each header present or not, weighted so most requests get past the checks that come first.
  const sometimes = <T,>(arbitrary: fc.Arbitrary<T>, present: number, absent: number) =>
    fc.oneof({ weight: present, arbitrary }, { weight: absent, arbitrary: fc.constant(undefined) });
  const headers = fc.record({
    'x-idempotency-key': sometimes(fc.oneof({ weight: 4, arbitrary: fc.uuid() }, { weight: 1, arbitrary: anyString }), 9, 1),
    'if-match': sometimes(fc.oneof(fc.constantFrom('"1"', '"2"', '*', 'W/"1"'), anyString), 2, 1),
    'content-type': sometimes(
      fc.oneof({ weight: 8, arbitrary: fc.constant('application/json') }, { weight: 1, arbitrary: fc.constantFrom('application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1') }),
      9,
      1,
    ),
    authorization: sometimes(fc.oneof(fc.constant('Bearer x.y.z'), anyString.map((value) => `Bearer ${value}`)), 1, 9),
    'x-request-id': sometimes(anyString, 1, 3),
  });
  const body = operation.body
    ? fc.oneof({ weight: 5, arbitrary: mutated(operation.body).map((value) => JSON.stringify(value) ?? 'null') }, { weight: 1, arbitrary: fc.oneof(anyString, fc.constant('')) })
    : fc.constant(undefined);
  return fc.tuple(pathParams, query, headers, body).map(([params, pairs, headerValues, payload]) => {
    let path = operation.path;
    operation.pathParams.forEach((name, index) => {
      const [value, raw] = params[index] as [string, boolean];
      path = path.replace(`{${name}}`, encodeSegment(value, raw) || 'x');
    });
    const search = new URLSearchParams(pairs.map(([name, value]) => [name, value])).toString();
    const safeHeaders: Record<string, string> = {};
    // A header value Node refuses to send is a client-side error, not a request: keep the printable ones.
    for (const [name, value] of Object.entries(headerValues)) if (typeof value === 'string' && /^[\t\x20-\x7e]*$/.test(value)) safeHeaders[name] = value;
    const url = search ? `${path}?${search}` : path;
    return { method: operation.method, url, headers: safeHeaders, ...(payload === undefined ? {} : { payload }), label: `${operation.method} ${operation.path}` };
  });
}
