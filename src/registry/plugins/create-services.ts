import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../core/clock.ts';
import { cardSignaturePolicy, publicBaseUrl, type Config } from '../../core/config.ts';
import type { KeySealer } from '../../core/crypto/key-sealer.ts';
import { createServerMetrics, type ServerMetrics } from '../../core/http/http-metrics.ts';
import { registryUri } from '../../core/ids.ts';
import { createGuardedFetch } from '../../core/net/guarded-fetch.ts';
import { createAgentService, type AgentService } from '../agents/agent-service.ts';
import { createCardReader } from '../agents/cards/card-reader.ts';
import { createCardRegistrations } from '../agents/cards/card-registrations.ts';
import { createComputerUseService } from '../computer-use/computer-use-service.ts';
import { createDiscoveryAnswers } from '../discovery/discovery-answers.ts';
import { createDiscoveryService } from '../discovery/discovery-service.ts';
import { openEventHub, type EventHub } from '../events/event-hub.ts';
import { createChildRegistries } from '../federation/child-registries.ts';
import { createFederatedDiscovery } from '../discovery/federated/federated-discovery.ts';
import { createParentLink } from '../federation/parent-link.ts';
import { createHeldTrustMarks } from '../federation/oidf/parent-trust-marks.ts';
import { createOwnTrustChain } from '../federation/oidf/own-trust-chain.ts';
import { createSuperiorView } from '../federation/oidf/superior-view.ts';
import { createAnchorTrustChain } from '../federation/oidf/anchor-trust-chain.ts';
import { agentTrustMarks } from '../federation/oidf/trust-marks.ts';
import { createHealthProber } from '../agents/health/health-prober.ts';
import { createApiKeyService, type ApiKeyService } from '../credentials/api-key-service.ts';
import { createLedgerService } from '../ledger/ledger-service.ts';
import { createInstanceHeartbeat, type InstanceHeartbeat } from '../operations/instance-heartbeat.ts';
import { createRegistryMetrics, type RegistryMetrics } from '../operations/registry-metrics.ts';
import { createRoutingService } from '../discovery/routing/routing-service.ts';
import type { RegistryServices } from './registry-services.ts';
import type { Storage } from '../storage/database.ts';
import { createKeyRenewal } from '../signing-keys/key-renewal.ts';
import type { KnownIssuer } from '../agents/evidence/attestations.ts';
import type { RegistrySigner } from '../signing-keys/registry-signer.ts';
import type { OpenedResources } from './opened-resources.ts';

/** What every service is built on: the configuration, the open storage, the clock and the signing key. */
export type ServiceFoundation = {
  config: Config;
  storage: Storage;
  clock: Clock;
  signer: RegistrySigner;
  knownIssuers: readonly KnownIssuer[];
  keySealer: KeySealer;
  opened: OpenedResources;
};

/** The parts of {@link RegistryServices} that know where this registry is and who it answers to. */
type Identity = { registryId: string; baseUrl: () => string; routes: Array<{ method: string; url: string }> };

/**
 * Builds the registry's services on an open, migrated storage. Hooks that services rely on are added
 * to `app` here, in this order: the route list (onRoute), then the listening address (onListen).
 */
export async function createRegistryServices(
  app: FastifyInstance,
  base: ServiceFoundation,
): Promise<{ services: RegistryServices; heartbeat: InstanceHeartbeat; serverMetrics: ServerMetrics }> {
  const { config, storage, clock, signer, knownIssuers } = base;
  const apiKeys = await createApiKeyService({
    storage,
    clock,
    ...(config.REGISTRY_API_KEY_SECRET ? { secret: config.REGISTRY_API_KEY_SECRET } : {}),
  });
  const identity = registryIdentity(app, config);
  const federation = await createFederation(app, base, identity);
  const agents = createAgentService({
    storage,
    clock,
    trustContext: () => ({ registryJwks: signer.jwks() as { keys: Record<string, unknown>[] }, knownIssuers }),
    endpointUrls: { production: config.REGISTRY_ENV === 'production', allowPrivate: config.REGISTRY_ALLOW_PRIVATE_ENDPOINTS },
  });
  const healthProber = createHealthProber({
    storage,
    clock,
    options: {
      intervalMs: config.REGISTRY_HEALTH_INTERVAL_MS,
      timeoutMs: config.REGISTRY_HEALTH_TIMEOUT_MS,
      concurrency: config.REGISTRY_HEALTH_CONCURRENCY,
      // Contract §4: private and loopback targets only outside production, or when allowed.
      allowPrivate: config.REGISTRY_ENV !== 'production' || config.REGISTRY_ALLOW_PRIVATE_ENDPOINTS,
    },
    log: (error) => app.log.warn({ err: error }, 'health probe round failed'),
    // `services` exists by the time the prober runs (it starts when the registry listens).
    onProbe: (result) => services.metrics.probed(result.status, result.reason),
  });
  const serverMetrics = createServerMetrics('registry');
  const eventHub = await openEventHub(storage, {
    postgres: storage.backend === 'postgres' && config.DATABASE_URL ? { url: config.DATABASE_URL, schema: config.DATABASE_SCHEMA } : undefined,
    onError: (error) => app.log.warn({ err: error }, 'event wake-up connection failed; reconnecting'),
  });
  base.opened.eventHub = eventHub;
  const heartbeat = createInstanceHeartbeat({ storage, clock, log: (error) => app.log.warn({ err: error }, 'instance heartbeat failed') });
  if (config.REGISTRY_ENV === 'production' && !base.keySealer.sealing) {
    app.log.warn('the signing keys are stored unencrypted: set REGISTRY_KEY_ENCRYPTION_KEY (or _FILE) to seal them at rest (docs/security.md)');
  }
  const keyRenewal = createKeyRenewal({
    storage,
    signer,
    clock,
    registryId: identity.registryId,
    lifetimeDays: config.REGISTRY_KEY_LIFETIME_DAYS,
    renewDays: config.REGISTRY_KEY_RENEW_DAYS,
    log: { info: (fields, message) => app.log.info(fields, message), warn: (fields, message) => app.log.warn(fields, message) },
    // The parent's statements must name the new key before bundles signed with it can verify.
    onRotated: () => {
      federation.parentLink.refresh().catch((error: unknown) => app.log.warn({ err: error }, 'refreshing the delegation after renewal failed'));
      // And the OIDF chain: building it has the superior read the configuration offering the new key.
      federation.oidfTrustChain().catch((error: unknown) => app.log.warn({ err: error }, 'rebuilding the OpenID Federation chain after renewal failed'));
    },
  });
  const services: RegistryServices = {
    ...identity,
    ...federation,
    ...createFinding(base, identity, federation, eventHub, agents),
    config,
    keyRenewal,
    healthProber,
    storage,
    clock,
    signer,
    agents,
    cards: createCards(app, base, agents),
    apiKeys,
    ledger: createLedgerService({ storage, signer, clock }),
    eventHub,
    metrics: undefined as unknown as RegistryMetrics,
    computerUse: createComputerUse(app, base, apiKeys, heartbeat),
  };
  services.metrics = createRegistryMetrics(serverMetrics, {
    storage,
    discoveryCacheStats: services.discoveryAnswers.cacheStats,
    keptRowStats: services.discovery.keptRowStats,
    signingKeyExpiresInSeconds: () => keyRenewal.expiresInSeconds(),
  });
  return { services, heartbeat, serverMetrics };
}

/**
 * This registry's URI, the address clients reach it at, and the list of its routes (filled as they
 * are registered).
 */
function registryIdentity(app: FastifyInstance, config: Config): Identity {
  const routes: Identity['routes'] = [];
  app.addHook('onRoute', (route) => {
    // HEAD twins and the CORS preflight are transport, not operations of the API; nor is a page
    // hidden from the API document (the landing at GET /).
    if ((route.schema as { hide?: boolean } | undefined)?.hide) return;
    for (const method of [route.method].flat()) if (method !== 'HEAD' && method !== 'OPTIONS') routes.push({ method, url: route.url });
  });
  const registryId = registryUri(config.REGISTRY_JURISDICTION, config.REGISTRY_NAME);
  // Once listening the address is fixed: computed once then (discovery asks per result).
  let listeningBaseUrl: string | undefined;
  const baseUrl = () => listeningBaseUrl ?? publicBaseUrl(config, listeningPort(app));
  app.addHook('onListen', async () => {
    listeningBaseUrl = publicBaseUrl(config, listeningPort(app));
  });
  return { registryId, baseUrl, routes };
}

type Federation = Pick<RegistryServices, 'parentLink' | 'trustChain' | 'childRegistries' | 'federatedDiscovery' | 'oidfTrustChain' | 'heldTrustMarks' | 'superiorView' | 'agentTrustMarks'>;

/**
 * The registry's place in a federation: its link to its parent and its children. A registry without a
 * parent is its own trust anchor (contract §5); with one, the chain is the last grant its parent gave
 * (docs/federation.md).
 */
async function createFederation(app: FastifyInstance, base: ServiceFoundation, identity: Identity): Promise<Federation> {
  const { registryId, baseUrl } = identity;
  const { config, storage, clock, signer } = base;
  // Federation fetches URLs others chose: in production never a private or loopback address (SSRF).
  const fetch = createGuardedFetch({ allowPrivate: config.REGISTRY_ENV !== 'production' || config.REGISTRY_ALLOW_PRIVATE_ENDPOINTS });
  const parentLink = await createParentLink({
    fetch,
    parentUrl: config.REGISTRY_PARENT_URL,
    registryId,
    storage,
    signer,
    clock,
    timeoutMs: config.REGISTRY_FEDERATION_TIMEOUT_MS,
    log: (message, error) => app.log.warn({ err: error }, message),
  });
  const trustChain = () => parentLink.trustChain();
  const childRegistries = createChildRegistries({ config, storage, clock, signer, registryId, trustChain, fetch });
  const federatedDiscovery = createFederatedDiscovery({
    children: childRegistries,
    signer,
    registryId,
    clock,
    timeoutMs: config.REGISTRY_FEDERATION_TIMEOUT_MS,
    fetch,
  });
  // OpenID Federation: the marks the parent issues about this registry, and its chain to the root.
  const warn = (message: string, error?: unknown) => app.log.warn({ err: error }, message);
  // What the superior stated, stored so every instance and a restart sign and confirm with it (decision 97).
  const superiorView = await createSuperiorView({ storage, parentUrl: config.REGISTRY_PARENT_URL, clock, log: warn });
  const heldTrustMarks = createHeldTrustMarks({ config, clock, baseUrl, fetch, superiorView, registryId }, warn);
  // A new Ward grant (a superior rotated, or re-issued) rebuilds the OIDF chain: told apart by its statements' signatures.
  const grantVersion = () => parentLink.trustChain().statements.map((statement) => statement.slice(-16)).join('.');
  const ownChain = createOwnTrustChain(
    {
      ...{ config, clock, signer, registryId, baseUrl, heldTrustMarks, fetch, superiorView, grantVersion },
      // A revocation either chain confirmed stands for both (one stored state: federation/parent-link-state.ts).
      revoked: () => parentLink.revoked(),
      confirmRevoked: (parentId) => parentLink.confirmRevoked(parentId),
    },
    warn,
  );
  // At the top of a federation the chain is the registry's own configuration alone (oidf/anchor-trust-chain.ts).
  const anchorChain = createAnchorTrustChain({ config, clock, signer, registryId, baseUrl, heldTrustMarks, activeChildren: () => childRegistries.activeChildren() }, warn);
  const oidfTrustChain: RegistryServices['oidfTrustChain'] = config.REGISTRY_PARENT_URL ? ownChain : anchorChain;
  // Built once in the background as the registry starts listening (after the address is fixed, the hook
  // above): the first federated request after a start finds a chain rather than waiting for the superiors.
  app.addHook('onListen', async () => {
    oidfTrustChain({ because: 'start' }).catch((error: unknown) => app.log.warn({ err: error }, 'building the OpenID Federation chain at start failed'));
  });
  const agentMarks: RegistryServices['agentTrustMarks'] = (record) => agentTrustMarks({ config, clock, signer, baseUrl }, record);
  return { parentLink, trustChain, childRegistries, federatedDiscovery, heldTrustMarks, superiorView, oidfTrustChain, agentTrustMarks: agentMarks };
}

/** Discovery (local and federated) and routing: how a caller finds an agent and one of its endpoints. */
function createFinding(
  base: ServiceFoundation,
  identity: Identity,
  federation: Federation,
  hub: EventHub,
  agents: RegistryServices['agents'],
): Pick<RegistryServices, 'discovery' | 'discoveryAnswers' | 'routing'> {
  const { config, storage, clock, signer } = base;
  const committedSeq = () => hub.committedSeq();
  const discovery = createDiscoveryService({
    storage,
    registryJurisdiction: config.REGISTRY_JURISDICTION,
    trustBundleUrl: (agentId) => `${identity.baseUrl()}/v1/trust/bundle?subject=${encodeURIComponent(agentId)}`,
    keptRows: config.REGISTRY_DISCOVERY_KEPT_ROWS,
    committedSeq,
    now: () => clock.now().getTime(),
  });
  const { federatedDiscovery, trustChain, oidfTrustChain, agentTrustMarks: agentMarks } = federation;
  const discoveryAnswers = createDiscoveryAnswers({ config, discovery, federatedDiscovery, signer, clock, baseUrl: identity.baseUrl, committedSeq });
  const routing = createRoutingService({
    agents,
    clock,
    discovery,
    signer,
    registryId: identity.registryId,
    trustChain,
    oidfTrustChain,
    agentTrustMarks: agentMarks,
    signResponses: config.REGISTRY_SIGN_RESPONSES,
    staleAfterMs: 3 * config.REGISTRY_HEALTH_INTERVAL_MS,
    committedSeq,
  });
  return { discovery, discoveryAnswers, routing };
}

/** Registration from A2A cards: read through the guarded fetch, as federation's fetches are (SSRF). */
function createCards(app: FastifyInstance, base: ServiceFoundation, agents: AgentService) {
  const { config, storage, clock } = base;
  const readCard = createCardReader({
    fetch: createGuardedFetch({ allowPrivate: config.REGISTRY_ENV !== 'production' || config.REGISTRY_ALLOW_PRIVATE_ENDPOINTS }),
    timeoutMs: config.REGISTRY_CARD_TIMEOUT_MS,
    maxBytes: config.REGISTRY_CARD_MAX_BYTES,
    signatures: cardSignaturePolicy(config),
  });
  return createCardRegistrations({
    storage,
    clock,
    agents,
    readCard,
    intervalMs: config.REGISTRY_CARD_REREAD_INTERVAL_MS,
    log: (error, message) => app.log.warn({ err: error }, message),
  });
}

function createComputerUse(app: FastifyInstance, base: ServiceFoundation, apiKeys: ApiKeyService, heartbeat: InstanceHeartbeat) {
  return createComputerUseService({
    config: base.config,
    storage: base.storage,
    clock: base.clock,
    apiKeys,
    instanceId: heartbeat.instanceId,
    // A run is failed only once its instance's heartbeat has been gone 30 s: a pause is not a death.
    isInstanceLive: (id: string) => heartbeat.isLive(id, 30_000),
    log: (error, message) => app.log.warn({ err: error }, message),
  });
}

function listeningPort(app: FastifyInstance): number | undefined {
  const address = app.server.listening ? app.server.address() : null;
  return address && typeof address === 'object' ? address.port : undefined;
}
