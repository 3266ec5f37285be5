/**
 * The words of the spec every part of Ward uses (spec: Endpoint, Discover, Tool interface): the
 * protocols an endpoint speaks and the purposes of use. Defined once here; the registry's schemas,
 * the mesh's consent requirement, the MCP tools and the console import them.
 */

/** The protocols an agent endpoint may speak (spec: Endpoint). */
export const PROTOCOLS = ['mesh-a2a-jsonrpc', 'fhir-rest', 'hl7v2-mllp'] as const;
export type Protocol = (typeof PROTOCOLS)[number];

/**
 * Protocol names a discovery or routing filter accepts beside the spec's, and what each matches
 * (docs/discovery.md, "Protocol names"). `a2a-jsonrpc` is the A2A JSON-RPC binding, as agents
 * registered from an A2A card have it: a caller that speaks A2A JSON-RPC can use those endpoints and
 * the mesh's (`mesh-a2a-jsonrpc` endpoints serve A2A 1.0 and v0.3 too), so it matches both; asking
 * for `mesh-a2a-jsonrpc` still means the mesh's own methods, which only mesh endpoints have.
 */
export const PROTOCOL_ALIASES: Readonly<Record<string, readonly string[]>> = { 'a2a-jsonrpc': ['a2a-jsonrpc', 'mesh-a2a-jsonrpc'] };

/** The endpoint protocols a protocol filter matches: the name itself, or its alias family. */
export function protocolsMatching(filter: string): readonly string[] {
  return PROTOCOL_ALIASES[filter] ?? [filter];
}

/** Purposes of use (spec: Discover `purpose_of_use`; consent is given per purpose). */
export const PURPOSES_OF_USE = ['treatment', 'payment', 'operations', 'research'] as const;
export type PurposeOfUse = (typeof PURPOSES_OF_USE)[number];
