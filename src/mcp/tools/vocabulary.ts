import { Type } from 'typebox';

/**
 * The values the spec's Tool interface names (service-spec: Tool interface; Endpoint): the protocols
 * an agent endpoint speaks and the purposes of use. Kept here rather than imported from the registry
 * because the MCP server is a client of the registry over HTTP; a test keeps the purposes in step
 * with the registry's own list.
 */
export const PROTOCOLS = ['mesh-a2a-jsonrpc', 'fhir-rest', 'hl7v2-mllp'] as const;
export type Protocol = (typeof PROTOCOLS)[number];

/** The protocol `register` gives an endpoint when none is named (spec: Tool interface). */
export const DEFAULT_PROTOCOL: Protocol = 'mesh-a2a-jsonrpc';

export const PURPOSES_OF_USE = ['treatment', 'payment', 'operations', 'research'] as const;
export type PurposeOfUse = (typeof PURPOSES_OF_USE)[number];

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
