import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/**
 * Two validators: bodies are checked strictly (no type coercion, unknown fields refused, every error
 * reported) so a wrong type is a clear 422; query strings, path parameters and headers arrive as text
 * and are coerced (`?limit=5`, repeated parameters become arrays).
 */
function createAjv(coerceTypes: false | 'array'): Ajv {
  const ajv = new Ajv({ coerceTypes, useDefaults: true, removeAdditional: false, allErrors: true, strict: false });
  addFormats(ajv);
  return ajv;
}

const bodyAjv = createAjv(false);
const textAjv = createAjv('array');

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? bodyAjv : textAjv).compile(schema as object);

const PART_NAMES: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };
const MAX_REPORTED = 50;

export type ValidationIssue = { in: string; pointer: string; reason: string };

/** Ajv errors as `details.errors[]`: where (`in`), a JSON pointer into that part, and why. */
export function toValidationIssues(errors: readonly Partial<ErrorObject>[], context: string | undefined): ValidationIssue[] {
  const part = PART_NAMES[context ?? 'body'] ?? 'body';
  // A value that matches none of a union's branches yields one error per branch plus the anyOf
  // itself; the anyOf alone says it best.
  const unionPaths = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath));
  const relevant = errors.filter((e) => e.keyword === 'anyOf' || !unionPaths.has(e.instancePath));
  return relevant.slice(0, MAX_REPORTED).map((error) => {
    const params = (error.params ?? {}) as Record<string, unknown>;
    const child = params.missingProperty ?? params.additionalProperty ?? params.propertyName;
    const pointer = `${error.instancePath ?? ''}${typeof child === 'string' ? `/${escapePointer(child)}` : ''}`;
    const reason =
      params.additionalProperty !== undefined
        ? 'is not an allowed property'
        : params.missingProperty !== undefined
          ? 'is required'
          : error.keyword === 'anyOf'
            ? 'does not match any allowed type'
            : (error.message ?? 'is invalid');
    return { in: part, pointer, reason };
  });
}

function escapePointer(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1');
}
