// OpenID Federation 1.0 as Ward speaks it (docs/federation.md, "OpenID Federation"): the media types and
// `typ` values, the endpoints a registry publishes (one table: the entity configuration's metadata and the
// routes are both made from it), the Ward entity type that carries a registry's URI, tier and
// jurisdiction, the error codes of OIDF §8.9 and the shape of an entity statement's claims.
import type { PublishedJwk } from '../core/crypto/key-set.ts';
import type { RegistryTier } from './delegation-statement.ts';

/** OIDF §3: every entity statement (entity configuration or subordinate statement) is typed so. */
export const ENTITY_STATEMENT_TYP = 'entity-statement+jwt';
export const ENTITY_STATEMENT_MEDIA_TYPE = 'application/entity-statement+jwt';
/** OIDF §8.3.2: the signed answer of the resolve endpoint. */
export const RESOLVE_RESPONSE_TYP = 'resolve-response+jwt';
export const RESOLVE_RESPONSE_MEDIA_TYPE = 'application/resolve-response+jwt';
/** OIDF §9: where every entity publishes its entity configuration, below its entity identifier. */
export const ENTITY_CONFIGURATION_PATH = '/.well-known/openid-federation';
/**
 * How long an entity configuration is good for. Longer than a subordinate statement (those live
 * REGISTRY_DELEGATION_TTL_SECONDS, so a revocation lapses quickly) and no longer than a trust bundle:
 * a resolver re-reads the keys at least hourly, well inside the day a rotated-away key stays published.
 */
export const ENTITY_CONFIGURATION_LIFETIME_SECONDS = 3600;

/**
 * The Entity Type Identifier of a Ward registry (OIDF §5.1 allows more types). Its metadata ties the
 * entity identifier (a URL) to the registry's `registry://` URI, tier and jurisdiction; a superior
 * states these about its subordinate in its statement's `metadata`, and bounds everything below it
 * with `metadata_policy` (jurisdiction, tier).
 */
export const WARD_REGISTRY_ENTITY_TYPE = 'ward_registry';
export const FEDERATION_ENTITY_TYPE = 'federation_entity';

/** The `ward_registry` metadata of a registry's entity configuration. */
export type WardRegistryMetadata = {
  registry_id: string;
  tier: RegistryTier;
  jurisdiction: string;
  /** The Ward API's base URL: the entity identifier itself. */
  api_base_url: string;
  /** The registry's Ward server metadata (`/.well-known/agent-registry`). */
  server_metadata_uri: string;
  jwks_uri: string;
};

/**
 * The federation endpoints (OIDF §8) a registry serves: the metadata member that names each, its
 * path, and whether only superiors publish it (OIDF §5.1.1: intermediates and trust anchors MUST
 * publish fetch and list, leaves MUST NOT; any entity may publish resolve).
 */
export const OIDF_ENDPOINTS = [
  { member: 'federation_fetch_endpoint', path: '/v1/oidf/fetch', superiorsOnly: true },
  { member: 'federation_list_endpoint', path: '/v1/oidf/list', superiorsOnly: true },
  { member: 'federation_resolve_endpoint', path: '/v1/oidf/resolve', superiorsOnly: false },
  // Every registry issues trust marks about its agents (./oidf-trust-marks.ts), superiors about their children too.
  { member: 'federation_trust_mark_status_endpoint', path: '/v1/oidf/trust-mark-status', superiorsOnly: false },
  { member: 'federation_trust_mark_endpoint', path: '/v1/oidf/trust-mark', superiorsOnly: false },
  { member: 'federation_trust_mark_list_endpoint', path: '/v1/oidf/trust-mark-list', superiorsOnly: false },
] as const;

export type OidfEndpointMember = (typeof OIDF_ENDPOINTS)[number]['member'];

/** The path of the endpoint named by `member`. */
export function oidfEndpointPath(member: OidfEndpointMember): string {
  return OIDF_ENDPOINTS.find((endpoint) => endpoint.member === member)?.path as string;
}

/** OIDF §8.9 error codes Ward answers with, each with its HTTP status. */
export const OIDF_ERROR_STATUS = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_trust_anchor: 404,
  invalid_trust_chain: 400,
  invalid_metadata: 400,
  not_found: 404,
  unsupported_parameter: 400,
  server_error: 500,
  temporarily_unavailable: 503,
} as const;

export type OidfErrorCode = keyof typeof OIDF_ERROR_STATUS;

/** The error body of every OIDF endpoint (OIDF §8.9), `application/json`. */
export type OidfErrorBody = { error: OidfErrorCode; error_description: string };

/** The constraints of a subordinate statement (OIDF §6.2). */
export type OidfConstraints = {
  max_path_length?: number;
  naming_constraints?: { permitted?: string[]; excluded?: string[] };
  allowed_entity_types?: string[];
};

/** A metadata policy: entity type → parameter → operator → value (OIDF §6.1). */
export type MetadataPolicy = Record<string, Record<string, Record<string, unknown>>>;
export type EntityMetadata = Record<string, Record<string, unknown>>;

/** The claims of an entity statement (OIDF §3.1) that Ward writes or reads. */
export type EntityStatementClaims = {
  iss: string;
  sub: string;
  iat: number;
  exp: number;
  jwks: { keys: PublishedJwk[] };
  authority_hints?: string[];
  metadata?: EntityMetadata;
  metadata_policy?: MetadataPolicy;
  metadata_policy_crit?: string[];
  constraints?: OidfConstraints;
  crit?: string[];
  source_endpoint?: string;
  /** OIDF §3.1.1 (entity configurations only): the marks others issued about the entity. */
  trust_marks?: Array<{ trust_mark_type: string; trust_mark: string; id?: string }>;
  /**
   * OIDF §3.1.1 (trust anchors' configurations only): trust mark type → the entity identifiers that may
   * issue marks of it in this federation (an empty array: anyone may).
   */
  trust_mark_issuers?: Record<string, string[]>;
};

/** The claims of a resolve response (OIDF §8.3.2). */
export type ResolveResponseClaims = {
  iss: string;
  sub: string;
  iat: number;
  exp: number;
  metadata: EntityMetadata;
  trust_chain: string[];
  /** The subject's trust marks that are valid now (OIDF §8.3.2), absent when none is. */
  trust_marks?: Array<{ trust_mark_type: string; trust_mark: string; id?: string }>;
};

/** An entity identifier without the trailing slash a configured URL may carry (identifiers compare as strings). */
export function entityIdentifier(url: string): string {
  return url.replace(/\/+$/, '');
}
