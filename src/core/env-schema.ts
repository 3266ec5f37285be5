import type { TObject } from 'typebox';
import { Value } from 'typebox/value';

import { ConfigError } from './config-error.ts';

export { ConfigError };

/**
 * Reads the variables a TypeBox schema names from an environment map: strings become the schema's
 * types (booleans `true`/`false`, integers), empty strings count as unset, defaults are filled in,
 * and the first invalid value throws a `ConfigError` naming its variable. Unknown variables are
 * ignored. Shared by the registry's and the mesh's configuration.
 */
export function readEnvironment(schema: TObject, env: Record<string, string | undefined>): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const [key, property] of Object.entries(schema.properties as Record<string, { type?: unknown }>)) {
    const raw = env[key];
    if (raw !== undefined && raw !== '') input[key] = coerce(property.type, raw);
  }
  const withDefaults = Value.Default(schema, input) as Record<string, unknown>;
  const firstError = Value.Errors(schema, withDefaults)[0];
  if (firstError) {
    const variable = firstError.instancePath.split('/')[1] || 'configuration';
    const property = (schema.properties as Record<string, PropertySchema>)[variable];
    throw new ConfigError(variable, `invalid value: ${property ? expectation(property, env[variable]) : firstError.message}`);
  }
  return withDefaults;
}

type PropertySchema = { type?: unknown; anyOf?: Array<{ const?: unknown }>; minimum?: number; maximum?: number; pattern?: string; format?: string; minLength?: number };

/**
 * What a variable must hold, in words an operator can act on (issue 33 item 11): the allowed values
 * of an enumerated one (with the value given, which names no secret), the range of a number, the
 * form of a URL or a pattern. Other values are never repeated: they may be secrets.
 */
function expectation(property: PropertySchema, given: string | undefined): string {
  const choices = property.anyOf?.map((option) => option.const).filter((value) => value !== undefined);
  if (choices && choices.length > 0) return `must be one of ${choices.join(', ')} (got "${String(given ?? '').slice(0, 40)}")`;
  if (property.type === 'integer') {
    const range = property.minimum !== undefined && property.maximum !== undefined ? ` from ${property.minimum} to ${property.maximum}` : property.minimum !== undefined ? ` of at least ${property.minimum}` : '';
    return `must be a whole number${range}`;
  }
  if (property.type === 'boolean') return 'must be true or false';
  if (property.format === 'uri') return `must be a URL${property.pattern === '^https?://' ? ' starting http:// or https://' : ''}`;
  if (property.pattern) return `must match ${property.pattern}`;
  if (property.minLength) return `must be at least ${property.minLength} characters`;
  return 'is not a value this setting takes';
}

/** Anything unparseable is left as it is, so validation names the variable. */
function coerce(type: unknown, raw: string): unknown {
  if (type === 'boolean') return raw === 'true' ? true : raw === 'false' ? false : raw;
  if (type === 'integer') return /^\d+$/.test(raw) ? Number(raw) : raw;
  return raw;
}
