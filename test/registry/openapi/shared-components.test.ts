import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { nameSharedComponents, type OpenApiDocument } from '../../../src/registry/openapi/shared-components.ts';

const envelope = { title: 'ErrorEnvelope', type: 'object', properties: { error: { type: 'object' } } };
const record = { title: 'AgentRecord', type: 'object', properties: { agent_id: { type: 'string' } } };
const json = (schema: unknown, description = 'Default Response') => ({ description, content: { 'application/json': { schema } } });

function documentWith(responses: Record<string, unknown>, more: Record<string, unknown> = {}): OpenApiDocument {
  return { openapi: '3.0.3', paths: { '/v1/agents/{id}': { get: { operationId: 'getAgent', responses, ...more } } } } as unknown as OpenApiDocument;
}

describe('naming shared components in the OpenAPI document', () => {
  test('a titled schema becomes one component, and each use a $ref to it (a nullable use wraps the $ref)', () => {
    const nested = { type: 'object', properties: { current: record, previous: { ...record, nullable: true } } };
    const named = nameSharedComponents(documentWith({ 200: json(nested), 201: json(record) }));
    assert.deepEqual(named.components?.schemas?.AgentRecord, record);
    const operation = named.paths['/v1/agents/{id}']?.get as any;
    assert.deepEqual(operation.responses['201'].content['application/json'].schema, { $ref: '#/components/schemas/AgentRecord' });
    assert.deepEqual(operation.responses['200'].content['application/json'].schema.properties, {
      current: { $ref: '#/components/schemas/AgentRecord' },
      previous: { nullable: true, allOf: [{ $ref: '#/components/schemas/AgentRecord' }] },
    });
  });

  test('two different schemas under one title stop the document being built', () => {
    const other = { ...record, properties: { agent_id: { type: 'integer' } } };
    assert.throws(() => nameSharedComponents(documentWith({ 200: json(record), 201: json(other) })), /Two different schemas are titled AgentRecord/);
  });

  test('an answer that is only the error envelope becomes a shared response per status, described with the codes of that status', () => {
    const named = nameSharedComponents(documentWith({ 200: json(record), 404: json(envelope), 429: json(envelope) }));
    const operation = named.paths['/v1/agents/{id}']?.get as any;
    assert.deepEqual(operation.responses['404'], { $ref: '#/components/responses/NotFound' });
    assert.deepEqual(operation.responses['429'], { $ref: '#/components/responses/TooManyRequests' });
    const notFound = named.components?.responses?.NotFound as any;
    assert.match(notFound.description, /^Not Found\. The error envelope .*AGENT_NOT_FOUND/);
    assert.deepEqual(notFound.content['application/json'].schema, { $ref: '#/components/schemas/ErrorEnvelope' });
  });

  test('an error answer with headers of its own, or an untitled body, stays where it is', () => {
    const withHeaders = { ...json(envelope), headers: { 'retry-after': { schema: { type: 'integer' } } } };
    const untitled = json({ type: 'object' });
    const named = nameSharedComponents(documentWith({ 200: json(record), 429: withHeaders, 400: untitled }));
    const operation = named.paths['/v1/agents/{id}']?.get as any;
    assert.equal(operation.responses['429'].headers['retry-after'].schema.type, 'integer');
    // Only swagger's placeholder description is replaced, by the status's own words.
    assert.deepEqual(operation.responses['400'], { ...untitled, description: 'Bad Request' });
    assert.deepEqual(named.components?.responses, {});
  });

  test('values are never taken for schemas: an enum or default holding a title stays as it is', () => {
    const schema = { type: 'object', default: { title: 'AgentRecord' }, enum: [{ title: 'AgentRecord' }] };
    const named = nameSharedComponents(documentWith({ 200: json(schema) }));
    assert.deepEqual((named.paths['/v1/agents/{id}']?.get as any).responses['200'].content['application/json'].schema, schema);
    assert.equal(named.components?.schemas?.AgentRecord, undefined);
  });
});
