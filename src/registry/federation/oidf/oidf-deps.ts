import type { AgentRecord } from '../../../contract/agent-record.ts';
import type { Clock } from '../../../core/clock.ts';
import type { Config } from '../../../core/config.ts';
import type { RegistrySigner } from '../../signing-keys/index.ts';
import type { RegistryRow } from '../storage/registry-store.ts';
import type { SuperiorView } from './superior-view.ts';

/** What the OpenID Federation side of a registry works with (the route plugin builds it from `app.ward`). */
export type OidfDeps = {
  config: Config;
  /** The active child registries, in registry-URI order (the subordinates, where they have an address). */
  activeChildren(): Promise<RegistryRow[]>;
  /** The active child whose entity identifier is `entityId` (compared as a string), or undefined. */
  activeChildAt(entityId: string): Promise<RegistryRow | undefined>;
  clock: Clock;
  signer: RegistrySigner;
  registryId: string;
  /** The registry's public base URL: its entity identifier (docs/federation.md). */
  baseUrl(): string;
  /** Set when this registry's parent revoked it: it then issues no subordinate statements. */
  revoked(): { reason: string | null } | undefined;
  /** The agent of this registry with URI `agentId`, or undefined (for its trust marks). */
  agent(agentId: string): Promise<AgentRecord | undefined>;
  /** The trust marks others issued about this registry, for its entity configuration (./parent-trust-marks.ts). */
  heldTrustMarks(): Promise<Array<{ trust_mark_type: string; trust_mark: string }>>;
  /** The fetch to reach other entities with (the registry's guarded fetch). */
  fetch: typeof fetch;
  /** A child's row after reading its entity configuration for a rollover (./subordinate-rollover.ts); never throws. */
  subordinateRollover(row: RegistryRow): Promise<RegistryRow>;
  /** The kids this registry's superior names for it, once learnt (./superior-view.ts): its entity configuration is signed with one of them. */
  superiorView?: SuperiorView;
};
