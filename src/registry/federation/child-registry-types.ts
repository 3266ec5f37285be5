/**
 * The shapes of child registries (contract §5, docs/federation.md): what a registration sends, what
 * the API answers, what a child fetches, and what the registry of children needs. Shared by the
 * registry of children, its grants, its key handling and the routes.
 */
import type { JWK } from 'jose';
import type { Clock } from '../../core/clock.ts';
import type { Config } from '../../core/config.ts';
import type { Storage } from '../storage/database.ts';
import type { RegistryRow } from './storage/registry-store.ts';
import type { RegistrySigner } from '../signing-keys/index.ts';

export const ENTITY_CONFIGURATION_TYP = 'ward-entity+jwt';
export type ChildTier = RegistryRow['tier'];
export type AnchorRole = 'root' | 'sovereign_registry' | 'organisation' | 'agent';

export type TrustAnchorInput = {
  key_id: string;
  alg: 'RS256' | 'ES256' | 'EdDSA';
  jwks_uri: string;
  thumbprint_sha256: string;
  role?: AnchorRole;
  not_before?: string;
  not_after?: string | null;
};

export type RegisterRegistryInput = {
  display_name: string;
  jurisdiction: string;
  tier: ChildTier;
  trust_anchors: TrustAnchorInput[];
  api_base_url?: string;
  /** The last part of the child's URI; defaults to a slug of display_name. */
  name?: string;
  /** The child's public keys; without them each anchor's jwks_uri is fetched. */
  jwks?: { keys: Record<string, unknown>[] };
};

/** A registry record as the API returns it. */
export type RegistryRecord = {
  registry_id: string;
  name: string;
  display_name: string;
  jurisdiction: string;
  tier: ChildTier;
  api_base_url: string | null;
  trust_anchors: Required<TrustAnchorInput>[];
  jwks: { keys: Record<string, unknown>[] };
  status: 'active' | 'revoked';
  revoked_at: string | null;
  revocation_reason: string | null;
  parent_id: string;
  delegation_chain: string[];
  version: number;
  created_at: string;
  updated_at: string;
};

export type PreparedRegistry = {
  input: RegisterRegistryInput;
  jurisdiction: string;
  name: string;
  id: string;
  anchors: Required<TrustAnchorInput>[];
  jwks: { keys: Record<string, unknown>[] };
};

/** What a child receives from `GET /v1/federation/fetch`. */
export type DelegationGrant = {
  sub: string;
  delegation_chain: string[];
  statements: string[];
  issuer_jwks: { keys: JWK[] };
  expires_at: string;
};

/** What the registry of children (./child-registries.ts) and its grants (./child-grants.ts) work with. */
export type ChildRegistriesDeps = {
  config: Config;
  storage: Storage;
  clock: Clock;
  signer: RegistrySigner;
  registryId: string;
  trustChain(): { delegationChain: string[]; statements: string[] };
  fetch?: typeof fetch;
};
