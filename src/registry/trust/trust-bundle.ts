import type { RegistrySigner } from '../../core/crypto/registry-signer.ts';
import type { AgentRecord } from '../agents/agent-record.ts';

/** Contract §5: the bundle a client keeps to verify an agent or registry offline. */
export type TrustBundle = {
  subject: string;
  /** The registry that issued and signed this bundle. */
  issuer: string;
  certificates: string[];
  jwks: { keys: Record<string, unknown>[] };
  attestations: string[];
  /** Registry URIs from the root down to the issuer. */
  delegation_chain: string[];
  /** Signed delegation statements from the root down (empty for a stand-alone registry). */
  statements: string[];
  trust_level: number;
  issued_at: string;
  expires_at: string;
};

export type SignedTrustBundle = TrustBundle & { signed_bundle: string };

/** Bundles are short-lived so an offline copy cannot outlive a revocation by much. */
export const BUNDLE_LIFETIME_MS = 60 * 60 * 1000;

export type BundleContext = {
  signer: RegistrySigner;
  registryId: string;
  delegationChain: string[];
  statements: string[];
  now: Date;
};

/** The bundle for an agent of this registry, signed by the registry's current key. */
export async function agentTrustBundle(record: AgentRecord, context: BundleContext): Promise<SignedTrustBundle> {
  return sign(
    {
      subject: record.agent_id,
      issuer: context.registryId,
      certificates: record.trust.certificates,
      jwks: { keys: record.trust.jwks?.keys ?? [] },
      attestations: record.trust.attestations,
      delegation_chain: context.delegationChain,
      statements: context.statements,
      trust_level: record.trust_validation.level,
      issued_at: context.now.toISOString(),
      expires_at: new Date(context.now.getTime() + BUNDLE_LIFETIME_MS).toISOString(),
    },
    context.signer,
  );
}

/** The bundle for this registry itself: its public keys and chain. */
export async function registryTrustBundle(context: BundleContext): Promise<SignedTrustBundle> {
  return sign(
    {
      subject: context.registryId,
      issuer: context.registryId,
      certificates: [],
      jwks: context.signer.jwks() as TrustBundle['jwks'],
      attestations: [],
      delegation_chain: context.delegationChain,
      statements: context.statements,
      trust_level: 0,
      issued_at: context.now.toISOString(),
      expires_at: new Date(context.now.getTime() + BUNDLE_LIFETIME_MS).toISOString(),
    },
    context.signer,
  );
}

/** The bundle for a child registry of this one: its delegated keys, vouched for by this registry. */
export async function childRegistryTrustBundle(child: { registry_id: string; jwks: { keys: Record<string, unknown>[] } }, context: BundleContext): Promise<SignedTrustBundle> {
  return sign(
    {
      subject: child.registry_id,
      issuer: context.registryId,
      certificates: [],
      jwks: { keys: child.jwks.keys },
      attestations: [],
      delegation_chain: context.delegationChain,
      statements: context.statements,
      trust_level: 0,
      issued_at: context.now.toISOString(),
      expires_at: new Date(context.now.getTime() + BUNDLE_LIFETIME_MS).toISOString(),
    },
    context.signer,
  );
}

async function sign(bundle: TrustBundle, signer: RegistrySigner): Promise<SignedTrustBundle> {
  return { ...bundle, signed_bundle: await signer.sign(bundle, 'ward-trust-bundle+jwt') };
}
