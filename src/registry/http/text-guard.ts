/**
 * Text the registry stores must be storable on every backend: PostgreSQL refuses the NUL character
 * (U+0000) in `text` and `jsonb`, SQLite takes it. Rather than a 500 on one backend and a stored NUL
 * on the other, a NUL anywhere in the path, the query or the body (values and member names) is a 422
 * naming where it is. Found by the OpenAPI-driven fuzzer (test/registry/http/fuzz.test.ts).
 */
import type { FastifyInstance } from 'fastify';
import { WardError } from '../../core/errors.ts';
import { escapePointerToken } from '../../core/phi/scan.ts';

/** The first place in `value` holding a NUL, as a JSON pointer, or undefined. */
function firstNul(value: unknown, pointer: string): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? pointer : undefined;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = firstNul(item, `${pointer}/${index}`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      const at = `${pointer}/${escapePointerToken(key.split('\u0000').join('\\u0000'))}`;
      if (key.includes('\u0000')) return at;
      const found = firstNul(item, at);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

export function registerTextGuard(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const places: Array<['path' | 'query' | 'body', unknown]> = [
      ['path', request.params],
      ['query', request.query],
      ['body', request.body],
    ];
    for (const [where, value] of places) {
      const pointer = value === undefined ? undefined : firstNul(value, '');
      if (pointer !== undefined) {
        throw new WardError('VALIDATION_ERROR', 'The request failed validation.', {
          errors: [{ in: where, pointer, reason: 'must not contain the NUL character (U+0000)' }],
        });
      }
    }
  });
}
