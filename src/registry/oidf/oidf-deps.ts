import type { Clock } from '../../core/clock.ts';
import type { Config } from '../../core/config.ts';
import type { RegistrySigner } from '../trust/registry-signer.ts';
import type { RegistryRow } from '../storage/stores/registry-store.ts';

/** What the OpenID Federation side of a registry works with (the route plugin builds it from `app.ward`). */
export type OidfDeps = {
  config: Config;
  /** The active child registries, in registry-URI order (the subordinates, where they have an address). */
  activeChildren(): Promise<RegistryRow[]>;
  clock: Clock;
  signer: RegistrySigner;
  registryId: string;
  /** The registry's public base URL: its entity identifier (docs/federation.md). */
  baseUrl(): string;
  /** Set when this registry's parent revoked it: it then issues no subordinate statements. */
  revoked(): { reason: string | null } | undefined;
  /** The fetch to reach other entities with (the registry's guarded fetch). */
  fetch: typeof fetch;
};
