/**
 * The words of the spec every part of Ward uses (spec: Endpoint, Discover, Tool interface): the
 * protocols an endpoint speaks and the purposes of use. Defined once here; the registry's schemas,
 * the mesh's consent requirement, the MCP tools and the console import them.
 */

/** The protocols an agent endpoint may speak (spec: Endpoint). */
export const PROTOCOLS = ['mesh-a2a-jsonrpc', 'fhir-rest', 'hl7v2-mllp'] as const;
export type Protocol = (typeof PROTOCOLS)[number];

/** Purposes of use (spec: Discover `purpose_of_use`; consent is given per purpose). */
export const PURPOSES_OF_USE = ['treatment', 'payment', 'operations', 'research'] as const;
export type PurposeOfUse = (typeof PURPOSES_OF_USE)[number];
