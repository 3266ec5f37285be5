import { Type } from 'typebox';
import type { Protocol } from '../core/vocabulary.ts';

/**
 * The values the spec's Tool interface names (service-spec: Tool interface; Endpoint), from the one
 * vocabulary in core (the MCP server is a client of the registry and imports none of its code), and
 * the tool schemas' enum helper.
 */
export { PROTOCOLS, PURPOSES_OF_USE, type Protocol, type PurposeOfUse } from '../core/vocabulary.ts';

/** The protocol `register` gives an endpoint when none is named (spec: Tool interface). */
export const DEFAULT_PROTOCOL: Protocol = 'mesh-a2a-jsonrpc';


/**
 * A string enum as plain JSON Schema (`enum`), which every MCP client renders; TypeBox's own literal
 * unions would become `anyOf` of `const`s, which several clients show as free text.
 */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: Record<string, unknown> = {},
) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}
