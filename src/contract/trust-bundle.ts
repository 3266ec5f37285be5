import type { RegistrySigner } from '../core/crypto/signer-types.ts';
import type { AgentRecord } from './agent-record.ts';
import type { TrustMarkEntry } from './oidf-trust-marks.ts';

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
  /**
   * OpenID Federation trust chain from the issuer to the root (OIDF §4: the issuer's entity
   * configuration, each superior's subordinate statement, the root's entity configuration), when the
   * issuer holds one; verifiers prefer it to `statements` (docs/federation.md, "Migration").
   */
  trust_chain?: string[];
  /** OIDF trust marks the issuer gives the subject (agent bundles; docs/federation.md, "Trust marks"). */
  trust_marks?: TrustMarkEntry[];
};

export type SignedTrustBundle = TrustBundle & { signed_bundle: string };

/** The JWS `typ` of a signed bundle; the verifier requires it. */
export const BUNDLE_TYP = 'ward-trust-bundle+jwt';

/** Bundles are short-lived so an offline copy cannot outlive a revocation by much. */
export const BUNDLE_LIFETIME_MS = 60 * 60 * 1000;

export type BundleContext = {
  signer: RegistrySigner;
  registryId: string;
  delegationChain: string[];
  statements: string[];
  /** The issuer's OIDF trust chain to the root, when it holds one. */
  trustChain?: string[] | undefined;
  now: Date;
};

/** The bundle for an agent of this registry, signed by the registry's current key. */
export function agentTrustBundle(record: AgentRecord, context: BundleContext & { trustMarks?: TrustMarkEntry[] }): Promise<SignedTrustBundle> {
  return signedBundle(
    {
      subject: record.agent_id,
      certificates: record.trust.certificates,
      jwks: { keys: record.trust.jwks?.keys ?? [] },
      attestations: record.trust.attestations,
      trust_level: record.trust_validation.level,
      ...(context.trustMarks ? { trust_marks: context.trustMarks } : {}),
    },
    context,
  );
}

/** The bundle for this registry itself: its public keys and chain. */
export function registryTrustBundle(context: BundleContext): Promise<SignedTrustBundle> {
  return signedBundle({ subject: context.registryId, jwks: context.signer.jwks() as TrustBundle['jwks'] }, context);
}

/** The bundle for a child registry of this one: its delegated keys, vouched for by this registry. */
export function childRegistryTrustBundle(child: { registry_id: string; jwks: { keys: Record<string, unknown>[] } }, context: BundleContext): Promise<SignedTrustBundle> {
  return signedBundle({ subject: child.registry_id, jwks: { keys: child.jwks.keys } }, context);
}

type BundleSubject = Pick<TrustBundle, 'subject' | 'jwks'> & Partial<Pick<TrustBundle, 'certificates' | 'attestations' | 'trust_level' | 'trust_marks'>>;

/**
 * Whether a bundle carries the issuer's OIDF chain. Below the root always. A trust anchor's chain is its
 * entity configuration alone, and a verifier holds the anchor's keys already: it is carried only for
 * what it is needed for, judging the bundle's trust marks (issuer identifier, `trust_mark_issuers`,
 * status endpoint), since it adds some 2 KiB to a bundle and about 11 KiB to routing advice, which
 * repeats it inside two signatures (docs/decisions.md 95).
 */
function carriesChain(chain: string[] | undefined, marks: TrustMarkEntry[] | undefined): chain is string[] {
  if (!chain || chain.length === 0) return false;
  return chain.length > 1 || (marks?.length ?? 0) > 0;
}

/** Issuer, chain and validity come from this registry; the JWS covers every other field. */
async function signedBundle(subject: BundleSubject, context: BundleContext): Promise<SignedTrustBundle> {
  const bundle: TrustBundle = {
    subject: subject.subject,
    issuer: context.registryId,
    certificates: subject.certificates ?? [],
    jwks: subject.jwks,
    attestations: subject.attestations ?? [],
    delegation_chain: context.delegationChain,
    statements: context.statements,
    trust_level: subject.trust_level ?? 0,
    issued_at: context.now.toISOString(),
    expires_at: new Date(context.now.getTime() + BUNDLE_LIFETIME_MS).toISOString(),
    ...(carriesChain(context.trustChain, subject.trust_marks) ? { trust_chain: context.trustChain } : {}),
    ...(subject.trust_marks ? { trust_marks: subject.trust_marks } : {}),
  };
  return { ...bundle, signed_bundle: await context.signer.sign(bundle, BUNDLE_TYP) };
}
