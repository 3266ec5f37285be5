import fastifyPlugin from 'fastify-plugin';
import type { Clock } from '../../core/clock.ts';
import type { AgentRecord } from '../../contract/agent-record.ts';
import type { TrustMarkEntry } from '../../contract/oidf-trust-marks.ts';
import type { Config } from '../../core/config.ts';
import type { RegistrySigner } from '../signing-keys/registry-signer.ts';
import type { Storage } from '../storage/database.ts';
import type { AgentService } from '../agents/agent-service.ts';
import type { ApiKeyService } from '../credentials/api-key-service.ts';
import type { LedgerService } from '../ledger/ledger-service.ts';
import type { DiscoveryService } from '../discovery/discovery-service.ts';
import type { DiscoveryAnswers } from '../discovery/discovery-answers.ts';
import type { HealthProber } from '../agents/health/health-prober.ts';
import type { RoutingService } from '../discovery/routing/routing-service.ts';
import type { ChildRegistries } from '../federation/child-registries.ts';
import type { FederatedDiscovery } from '../discovery/federated/federated-discovery.ts';
import type { ParentLink } from '../federation/parent-link.ts';
import type { SuperiorView } from '../federation/oidf/superior-view.ts';
import type { ChainRequest } from '../federation/oidf/own-trust-chain.ts';
import type { RegistryMetrics } from '../operations/registry-metrics.ts';
import type { EventHub } from '../events/event-hub.ts';
import type { ComputerUseService } from '../computer-use/computer-use-service.ts';
import type { KeyRenewal } from '../signing-keys/key-renewal.ts';
import type { CardRegistrations } from '../agents/cards/card-registrations.ts';

/** The registry's shared services, built once per app and reached by routes as `app.ward`. */
export type RegistryServices = {
  readonly config: Config;
  readonly storage: Storage;
  readonly clock: Clock;
  readonly signer: RegistrySigner;
  readonly agents: AgentService;
  /** Agents registered from their A2A card, and the re-reads of those cards (cards/card-registrations.ts). */
  readonly cards: CardRegistrations;
  readonly apiKeys: ApiKeyService;
  /** The transparency ledger's read side (proofs, signed tree heads). */
  readonly ledger: LedgerService;
  readonly discovery: DiscoveryService;
  /** `GET /v1/discover`'s answers: local (cached, signed) and federated, behind their access policy. */
  readonly discoveryAnswers: DiscoveryAnswers;
  /** What this instance knows is committed, and the wake-ups of its event stream readers. */
  readonly eventHub: EventHub;
  readonly routing: RoutingService;
  readonly healthProber: HealthProber;
  /** The child registries this registry delegated to (federation). */
  readonly childRegistries: ChildRegistries;
  /** This registry's link to its parent: the chain it holds (its own alone without a parent). */
  readonly parentLink: ParentLink;
  readonly federatedDiscovery: FederatedDiscovery;
  /** Renews the signing key before its `not_after` (trust/key-renewal.ts). */
  readonly keyRenewal: KeyRenewal;
  /** This registry's URI, `registry://<jurisdiction>/registries/<name>`. */
  readonly registryId: string;
  /** The delegation chain from the root down to this registry, and the statements that prove it. */
  trustChain(): { delegationChain: string[]; statements: string[] };
  /** This registry's OpenID Federation trust chain to the root (oidf/own-trust-chain.ts), when it has one; at the top of a federation its own entity configuration alone (oidf/anchor-trust-chain.ts). `request` says why beyond serving it (a warm-up, a stale-chain hint). */
  oidfTrustChain(request?: ChainRequest): Promise<string[] | undefined>;
  /** The OIDF trust marks its parent issued about this registry, for its entity configuration. */
  heldTrustMarks(): Promise<TrustMarkEntry[]>;
  /** What this instance learnt from its superior through OIDF: the kids it names, its keys, its last marks (oidf/superior-view.ts). */
  readonly superiorView: SuperiorView;
  /** The OIDF trust marks this registry gives one of its agents now (oidf/trust-marks.ts). */
  agentTrustMarks(record: AgentRecord): Promise<TrustMarkEntry[]>;
  /** Every API operation registered, as method and URL pattern (HEAD twins, CORS preflight and pages hidden from the API document left out). */
  readonly routes: ReadonlyArray<{ method: string; url: string }>;
  /** Computer use: the browser on the console (docs/computer-use.md). */
  readonly computerUse: ComputerUseService;
  /** The registry's own metrics beside the HTTP ones (operations/registry-metrics.ts). */
  metrics: RegistryMetrics;
  /** The URL clients reach this registry at (configured, or the listen address once listening). */
  baseUrl(): string;
};

declare module 'fastify' {
  interface FastifyInstance {
    ward: RegistryServices;
  }
}

/**
 * The `ward-registry-services` plugin: decorates the app with its services as `app.ward`. Every route
 * group names it in its dependencies (http/route-plugin.ts).
 */
export const registryServices = fastifyPlugin<{ services: RegistryServices }>(
  async (app, { services }) => {
    app.decorate('ward', services);
  },
  { name: 'ward-registry-services', fastify: '5.x' },
);
