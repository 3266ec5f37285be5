// A real three-tier chain built in-process: root → sovereign (GB) → organisational, each with its own
// key pair, real delegation statements and a bundle signed by the organisational registry.
import { CompactSign, calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import type { PublishedJwk } from '../../src/core/crypto/key-set.ts';
import type { SigningAlg } from '../../src/registry/signing-keys/registry-signer.ts';
import { agentUri, newUlid } from '../../src/core/ids.ts';
import { childConstraints, signDelegationStatement, type DelegationStatementInput } from '../../src/contract/delegation-statement.ts';
import type { TrustAnchorInput } from '../../src/client/trust/bundle-verifier.ts';
import type { SignedTrustBundle } from '../../src/contract/trust-bundle.ts';

export type KeyWindow = { not_before?: string | null; not_after?: string | null };

/** Enough of a RegistrySigner for statements and bundles, plus raw signing for forged headers. */
export type TestSigner = {
  kid: string;
  alg: SigningAlg;
  publicJwk: PublishedJwk;
  sign(payload: unknown, typ?: string): Promise<string>;
  signWithHeader(payload: unknown, header: Record<string, unknown>): Promise<string>;
  jwks(): { keys: PublishedJwk[] };
};

export async function createTestSigner(alg: SigningAlg = 'ES256', window: KeyWindow = {}, kid?: string): Promise<TestSigner> {
  const { publicKey, privateKey } = await generateKeyPair(alg, alg === 'EdDSA' ? { crv: 'Ed25519' } : {});
  const exported = await exportJWK(publicKey);
  const keyId = kid ?? (await calculateJwkThumbprint(exported, 'sha256'));
  const publicJwk: PublishedJwk = { ...(exported as Record<string, unknown>), kid: keyId, alg, use: 'sig', ...window };
  const signWithHeader = (payload: unknown, header: Record<string, unknown>) =>
    new CompactSign(new TextEncoder().encode(JSON.stringify(payload))).setProtectedHeader({ alg, kid: keyId, ...header }).sign(privateKey);
  return {
    kid: keyId,
    alg,
    publicJwk,
    sign: (payload, typ = 'JWT') => signWithHeader(payload, { typ }),
    signWithHeader,
    jwks: () => ({ keys: [publicJwk] }),
  };
}

/** One registry of the chain. */
export type Party = { uri: string; tier: 'root' | 'sovereign' | 'organisational'; jurisdiction: string; signer: TestSigner; apiBaseUrl: string };

export const ROOT_URI = 'registry://gb/registries/root';
export const SOVEREIGN_URI = 'registry://gb/registries/nhs';
export const ORG_URI = 'registry://gb/registries/leeds-th';

export const STATEMENT_TTL_SECONDS = 900;

export async function party(uri: string, tier: Party['tier'], alg: SigningAlg = 'ES256', apiBaseUrl = `https://${uri.split('/').at(-1)}.example`): Promise<Party> {
  return { uri, tier, jurisdiction: (uri.split('/')[2] as string).toUpperCase(), signer: await createTestSigner(alg), apiBaseUrl };
}

/** The statement `parent` signs about `child`, as the registry service would issue it; `overrides` replace claims. */
export function delegate(parent: Party, child: Party, now: Date, overrides: Partial<DelegationStatementInput> = {}): Promise<string> {
  return signDelegationStatement(parent.signer, {
    iss: parent.uri,
    sub: child.uri,
    tier: child.tier as 'sovereign' | 'organisational',
    jurisdiction: child.jurisdiction,
    jwks: child.signer.jwks(),
    api_base_url: child.apiBaseUrl,
    now,
    ttlSeconds: STATEMENT_TTL_SECONDS,
    ...overrides,
    constraints: overrides.constraints ?? childConstraints(parent.tier, child.jurisdiction),
  });
}

/** A trust bundle about `subject`, signed by `issuer` (the last link of `chain`). */
export async function signBundle(
  issuer: { uri: string; signer: Pick<TestSigner, 'sign'> },
  chain: string[],
  statements: string[],
  now: Date,
  subject: string = agentUri('GB', newUlid()),
): Promise<SignedTrustBundle> {
  const fields = {
    subject,
    issuer: issuer.uri,
    certificates: [],
    jwks: { keys: [] },
    attestations: [],
    delegation_chain: chain,
    statements,
    trust_level: 2,
    issued_at: now.toISOString(),
    expires_at: new Date(now.getTime() + 60 * 60 * 1000).toISOString(),
  };
  return { ...fields, signed_bundle: await issuer.signer.sign(fields, 'ward-trust-bundle+jwt') };
}

export type Chain = {
  root: Party;
  sovereign: Party;
  org: Party;
  statements: string[];
  bundle: SignedTrustBundle;
  anchor: TrustAnchorInput;
};

/** A valid chain root (ES256) → sovereign GB (EdDSA) → organisational (RS256) and an agent bundle. */
export async function buildChain(now: Date, apiBaseUrls: { root?: string; sovereign?: string; org?: string } = {}): Promise<Chain> {
  const root = await party(ROOT_URI, 'root', 'ES256', apiBaseUrls.root);
  const sovereign = await party(SOVEREIGN_URI, 'sovereign', 'EdDSA', apiBaseUrls.sovereign);
  const org = await party(ORG_URI, 'organisational', 'RS256', apiBaseUrls.org);
  const statements = [await delegate(root, sovereign, now), await delegate(sovereign, org, now)];
  const bundle = await signBundle(org, [root.uri, sovereign.uri, org.uri], statements, now);
  return { root, sovereign, org, statements, bundle, anchor: { jwks: root.signer.jwks(), registry_id: root.uri, api_base_url: root.apiBaseUrl } };
}

/** The same chain with statement `index` replaced, re-signed by the issuer so only the statement differs. */
export async function withStatement(chain: Chain, index: number, statement: string, now: Date): Promise<SignedTrustBundle> {
  const statements = chain.statements.map((s, i) => (i === index ? statement : s));
  return signBundle(chain.org, chain.bundle.delegation_chain, statements, now, chain.bundle.subject);
}
