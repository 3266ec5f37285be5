import { Type, type Static, type TSchema } from 'typebox';
import { ERROR_CODES } from '../../core/errors.ts';

/**
 * A string enum as OpenAPI 3.0.3 can express it (`enum`, not the `const` unions TypeBox makes for
 * literals), still typed as the literal union.
 */
export function StringEnum<const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/** `schema` or null, in OpenAPI 3.0.3's spelling (`nullable: true`), which Ajv and the serializer read too. */
export function Nullable<T extends TSchema>(schema: T) {
  return Type.Unsafe<Static<T> | null>({ ...schema, nullable: true });
}

/** RFC 3339 UTC timestamp with milliseconds. */
export const Timestamp = Type.String({ format: 'date-time' });

/** ISO 3166-1 alpha-2 in either case; the handler checks it against the real list. */
export const JurisdictionInput = Type.String({ pattern: '^[A-Za-z]{2}$', description: 'ISO 3166-1 alpha-2 code' });

export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object({
      code: StringEnum(Object.keys(ERROR_CODES)),
      message: Type.String(),
      details: Type.Object({}, { additionalProperties: true }),
      retryable: Type.Boolean(),
      retry_after_ms: Nullable(Type.Integer()),
    }),
  },
  { title: 'ErrorEnvelope', description: 'The registry error envelope (docs/errors.md).' },
);

/**
 * Error responses every route can produce; merged into each route's response map. 429 and 503: any
 * request made with an API key is rate-limited, and refused when the limiter cannot be reached.
 */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const responses: Record<number, TSchema> = {};
  for (const status of new Set([400, 413, 415, 422, 429, 500, 503, ...statuses])) responses[status] = ErrorEnvelope;
  return responses;
}

export const IdempotencyHeaders = Type.Object({
  'x-idempotency-key': Type.Optional(
    Type.String({ description: 'UUID; required on state-changing POST and PUT (contract §2).' }),
  ),
});

/** A JSON Web Key Set (RFC 7517): what the registry publishes, and what it keeps of other registries. */
export const JwksSchema = Type.Object(
  { keys: Type.Array(Type.Object({}, { additionalProperties: true })) },
  { title: 'Jwks', description: 'A JSON Web Key Set (RFC 7517)' },
);

export const PageLimit = Type.Integer({ minimum: 1, maximum: 100, default: 20 });
export const Cursor = Type.String({ minLength: 1, maxLength: 512 });

export const NoBody = Type.Object({}, { additionalProperties: false });
