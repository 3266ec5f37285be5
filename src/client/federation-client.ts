/**
 * Registry-to-registry calls (docs/federation.md), through the same transport as the registry client
 * (./registry-transport.ts): a child fetching its delegation grant, anyone asking an issuer for the
 * status of a registry it delegated to, a parent asking a child in federated discovery, and a child's
 * key set read at its registration. The policy differs from a user's client, and is the default here:
 * the address is someone else's, so a redirect is an error (nothing is followed to a third place), the
 * answer is read up to a cap, and no user credential is ever sent (federated discovery carries the
 * asking registry's own short-lived token). Pass the registry's guarded fetch
 * (src/core/net/guarded-fetch.ts) so production never reaches a private address. Each call gives a
 * {@link RegistryAnswer}, never a throw; {@link failureKind} says why one failed.
 *
 * The calls are grouped by endpoint so that OpenID Federation's (entity configuration, fetch, resolve,
 * list) can be added beside them.
 */
import type { Static } from 'typebox';
import type { DiscoverQuery, DiscoveryResponseSchema } from '../contract/schemas/discovery-schemas.ts';
import type { DelegationGrantSchema, RegistryStatusSchema } from '../contract/schemas/registry-schemas.ts';
import type { RegistryAnswer } from './registry-answer.ts';
import { createTransport, queryString as query, send, type CallOptions, type Transport, type TransportOptions } from './registry-transport.ts';

export { failureKind, type FailureKind } from './registry-transport.ts';

/** Request header of federated discovery: how many milliseconds the asking parent will wait for this answer. */
export const FEDERATION_BUDGET_HEADER = 'ward-federation-budget-ms';
/** Request header of a grant fetch: the child's entity configuration, signed by its keys (space-separated JWSs). */
export const ENTITY_CONFIGURATION_HEADER = 'ward-entity-configuration';

export type DelegationGrantAnswer = Static<typeof DelegationGrantSchema>;
export type RegistryStatusAnswer = Static<typeof RegistryStatusSchema>;
export type FederatedDiscoveryAnswer = Static<typeof DiscoveryResponseSchema>;

/**
 * The other registry's base URL (a parent's REGISTRY_PARENT_URL, a child's `api_base_url`, an
 * issuer's), the `fetch` to reach it with (registries pass their guarded fetch), the timeout per
 * request (default 10 000 ms), the largest answer read (default no cap) and the redirect policy
 * (default `error`: a registry's federation endpoints answer where they are asked).
 */
export type FederationClientOptions = Pick<TransportOptions, 'baseUrl' | 'fetch' | 'timeoutMs' | 'maxBytes' | 'redirect'>;

/** What a parent sends a child it asks in federated discovery. */
export type FederationAsker = {
  /** The parent's federation token, audience the child (src/registry/federation/federation-token.ts). */
  token: string;
  /** How long the parent waits: the request's deadline, and told to the child so it answers in time. */
  budgetMs: number;
};

/** The federation endpoints of the registry at `options.baseUrl`. */
export function createFederationClient(options: FederationClientOptions) {
  const t = createTransport({ ...options, redirect: options.redirect ?? 'error' });
  return {
    baseUrl: t.baseUrl,
    /**
     * `GET /v1/federation/fetch?sub=`: a fresh delegation grant for `sub`, presenting its entity
     * configuration so a key rotation there reaches the statement. Unchecked: the caller verifies it.
     */
    delegationGrant: (sub: string, entityConfiguration: string, call: CallOptions = {}): Promise<RegistryAnswer<DelegationGrantAnswer>> =>
      send(t, 'GET', `/v1/federation/fetch${query({ sub })}`, { ...call, headers: { ...call.headers, [ENTITY_CONFIGURATION_HEADER]: entityConfiguration } }),
    /** `GET /v1/federation/status?sub=`: the issuer's word on `sub`; only its signed `status_token` counts. */
    delegationStatus: (sub: string, call: CallOptions = {}): Promise<RegistryAnswer<RegistryStatusAnswer>> =>
      send(t, 'GET', `/v1/federation/status${query({ sub })}`, call),
    /**
     * `GET /v1/discover` asked by a parent: with its federation token, and within its budget. The answer
     * is not verified here: its `signed_response` must verify against the keys the parent delegated.
     */
    federatedDiscover: (filter: Static<typeof DiscoverQuery>, asker: FederationAsker, call: CallOptions = {}): Promise<RegistryAnswer<FederatedDiscoveryAnswer>> =>
      send(t, 'GET', `/v1/discover${query(filter)}`, {
        ...call,
        timeoutMs: asker.budgetMs,
        headers: { ...call.headers, authorization: `Bearer ${asker.token}`, [FEDERATION_BUDGET_HEADER]: String(asker.budgetMs) },
      }),
  };
}

export type FederationClient = ReturnType<typeof createFederationClient>;

/**
 * The JWK Set at `uri` exactly as given (a child registry's `jwks_uri`, named at its registration),
 * with the federation policy: no redirect, the answer capped at `maxBytes`, within `timeoutMs` and
 * `signal`. The set is not checked here.
 */
export function fetchKeySet(
  uri: string,
  options: { fetch?: typeof fetch | undefined; timeoutMs: number; maxBytes: number; signal?: AbortSignal | undefined },
): Promise<RegistryAnswer<{ keys?: unknown }>> {
  const transport: Transport = { ...createTransport({ baseUrl: uri, fetch: options.fetch, timeoutMs: options.timeoutMs, redirect: 'error', maxBytes: options.maxBytes }), baseUrl: uri };
  return send(transport, 'GET', '', { signal: options.signal });
}
