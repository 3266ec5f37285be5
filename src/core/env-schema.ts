import type { TObject } from 'typebox';
import { Value } from 'typebox/value';

/** A configuration value that stops start-up; the message names the variable. */
export class ConfigError extends Error {
  readonly variable: string;
  constructor(variable: string, message: string) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
    this.variable = variable;
  }
}

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
    throw new ConfigError(variable, `invalid value (${firstError.message})`);
  }
  return withDefaults;
}

/** Anything unparseable is left as it is, so validation names the variable. */
function coerce(type: unknown, raw: string): unknown {
  if (type === 'boolean') return raw === 'true' ? true : raw === 'false' ? false : raw;
  if (type === 'integer') return /^\d+$/.test(raw) ? Number(raw) : raw;
  return raw;
}
