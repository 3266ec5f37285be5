/**
 * A registry's entity configuration (OIDF §3, §9): the self-signed entity statement at
 * `/.well-known/openid-federation`. Its entity identifier is the registry's public base URL
 * (REGISTRY_PUBLIC_URL, else the listen address); its `jwks` are the registry's signing keys as
 * `/.well-known/jwks.json` publishes them (one key store: the federation keys are the registry keys);
 * `authority_hints` names the parent (REGISTRY_PARENT_URL), none at the root.
 */
import {
  ENTITY_CONFIGURATION_LIFETIME_SECONDS,
  ENTITY_STATEMENT_TYP,
  FEDERATION_ENTITY_TYPE,
  OIDF_ENDPOINTS,
  WARD_REGISTRY_ENTITY_TYPE,
  entityIdentifier,
  type EntityStatementClaims,
  type WardRegistryMetadata,
} from '../../../contract/openid-federation.ts';
import { WARD_TRUST_MARKS, type TrustMarkEntry } from '../../../contract/oidf-trust-marks.ts';
import type { PublishedJwk } from '../../../core/crypto/key-set.ts';
import type { OidfDeps } from './oidf-deps.ts';
import { configurationKid, signWithKid } from './superior-view.ts';

/** This registry's entity identifier. */
export function ownEntityId(deps: Pick<OidfDeps, 'baseUrl'>): string {
  return entityIdentifier(deps.baseUrl());
}

/** The parent's entity identifier (REGISTRY_PARENT_URL), or undefined at the top of a federation. */
export function parentEntityId(deps: Pick<OidfDeps, 'config'>): string | undefined {
  const parent = deps.config.REGISTRY_PARENT_URL;
  return parent ? entityIdentifier(parent) : undefined;
}

/**
 * Whether this registry is a superior in OIDF's sense: the root and sovereign registries take
 * subordinates, so they publish fetch and list endpoints; an organisational registry is a leaf.
 */
export function isSuperior(deps: Pick<OidfDeps, 'config'>): boolean {
  return deps.config.REGISTRY_TIER !== 'organisational';
}

type ConfigurationDeps = Pick<OidfDeps, 'config' | 'clock' | 'signer' | 'registryId' | 'baseUrl'>;

/**
 * The claims of this registry's entity configuration at `now`, with the `trust_marks` others issued
 * about it (OIDF §3.1.1: trust marks are carried in the subject's own entity configuration).
 */
export function entityConfigurationClaims(
  deps: ConfigurationDeps,
  now: Date,
  trustMarks: TrustMarkEntry[] = [],
  trustMarkIssuers?: Record<string, string[]>,
): EntityStatementClaims {
  const id = ownEntityId(deps);
  const iat = Math.floor(now.getTime() / 1000);
  const parent = parentEntityId(deps);
  const endpoints = Object.fromEntries(
    OIDF_ENDPOINTS.filter((endpoint) => !endpoint.superiorsOnly || isSuperior(deps)).map((endpoint) => [endpoint.member, `${id}${endpoint.path}`]),
  );
  const ward: WardRegistryMetadata = {
    registry_id: deps.registryId,
    tier: deps.config.REGISTRY_TIER,
    jurisdiction: deps.config.REGISTRY_JURISDICTION,
    api_base_url: id,
    server_metadata_uri: `${id}/.well-known/agent-registry`,
    jwks_uri: `${id}/.well-known/jwks.json`,
  };
  return {
    iss: id,
    sub: id,
    iat,
    exp: iat + ENTITY_CONFIGURATION_LIFETIME_SECONDS,
    jwks: { keys: deps.signer.jwks().keys as PublishedJwk[] },
    ...(parent ? { authority_hints: [parent] } : {}),
    metadata: {
      [FEDERATION_ENTITY_TYPE]: { ...endpoints, organization_name: deps.config.REGISTRY_NAME },
      [WARD_REGISTRY_ENTITY_TYPE]: ward,
    },
    ...(trustMarks.length > 0 ? { trust_marks: trustMarks } : {}),
    ...(trustMarkIssuers ? { trust_mark_issuers: trustMarkIssuers } : {}),
  };
}

/**
 * The trust anchor's `trust_mark_issuers` (OIDF §3.1.1), at the root only: who in this federation may
 * issue each Ward mark type. `delegated-registry`: the registries that take children, i.e. the root and
 * its active sovereign children with an address (a revoked sovereign's marks stop being honoured at once).
 * The agent types: an empty list (any entity; the root cannot enumerate the organisations below its
 * sovereigns), so a resolver still needs the issuer's keys from the subject's own chain (docs/decisions.md 89).
 */
export async function trustMarkIssuers(deps: Pick<OidfDeps, 'config' | 'baseUrl'> & Partial<Pick<OidfDeps, 'activeChildren'>>): Promise<Record<string, string[]> | undefined> {
  const { activeChildren } = deps;
  if (!activeChildren || parentEntityId(deps) !== undefined || deps.config.REGISTRY_TIER !== 'root') return undefined;
  const superiors = [ownEntityId(deps), ...(await activeChildren()).flatMap((row) => (row.api_base_url ? [entityIdentifier(row.api_base_url)] : []))];
  return Object.fromEntries(WARD_TRUST_MARKS.map((mark) => [mark.type, mark.subject === 'registry' ? superiors : []]));
}

/**
 * The entity configuration (`typ: entity-statement+jwt`), signed with the registry's current key, or,
 * while its superior's statement does not name that key yet, with a key the superior names (a key
 * rollover: ./superior-view.ts). It expires no later than the signing key's `not_after`: a
 * configuration outliving the key that signs it would stand, in chains and bundles, after the key
 * left the JWKS it must verify with (docs/decisions.md 99).
 */
export async function signEntityConfiguration(
  deps: ConfigurationDeps & Pick<OidfDeps, 'heldTrustMarks' | 'superiorView'> & Partial<Pick<OidfDeps, 'activeChildren'>>,
): Promise<string> {
  const trustMarks = await deps.heldTrustMarks();
  const issuers = await trustMarkIssuers(deps);
  // A rotation on another instance shows here within seconds, as in /.well-known/jwks.json.
  await deps.signer.refreshIfStale();
  const now = deps.clock.now();
  const kid = configurationKid(deps.signer, deps.superiorView?.namedKids, now);
  const claims = entityConfigurationClaims(deps, now, trustMarks, issuers);
  const notAfter = deps.signer.publishedKeys().find((key) => key.kid === kid)?.not_after;
  if (notAfter) claims.exp = Math.min(claims.exp, Math.floor(Date.parse(notAfter) / 1000));
  return signWithKid(deps.signer, claims, ENTITY_STATEMENT_TYP, kid);
}
