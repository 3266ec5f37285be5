// Verifying a trust bundle through its OpenID Federation `trust_chain` (docs/federation.md, "One chain"):
// the chain from the issuer's entity configuration up to the root's is validated as OIDF §10.2 says
// with the root's keys pinned (the verifier's trust anchor, nothing else), its metadata resolved under
// every superior's policy (OIDF §6.1), and then the issuer's keys are the ones its superior's statement
// names (the anchor's own when the root issued the bundle). The bundle's JWS, its subject's jurisdiction
// and the trust marks it carries (./bundle-trust-marks.ts) are checked with those keys. Online, each
// subordinate statement is fetched again from where its issuer signed it came from (`source_endpoint`):
// a superior that no longer issues it (`not_found`) has revoked the subject; and each mark's status is
// asked of its issuer.
import { ENTITY_STATEMENT_TYP, WARD_REGISTRY_ENTITY_TYPE, entityIdentifier, type EntityMetadata, type EntityStatementClaims } from '../../contract/openid-federation.ts';
import type { TrustBundle } from '../../contract/trust-bundle.ts';
import { SKEW_MS, offeredKeyMembers, readProtectedHeader, verifyWithKeySet, type PublishedJwk } from '../../core/crypto/key-set.ts';
import { resolveMetadata } from '../oidf/metadata-policy.ts';
import { OidfError } from '../oidf/oidf-error.ts';
import { readEntityStatement, validateTrustChain, type ValidTrustChain } from '../oidf/trust-chain-validation.ts';
import { fetchSubordinateStatement } from '../openid-federation-client.ts';
import { bundleSignatureErrors } from './bundle-signature.ts';
import type { ChainVerificationError } from './chain-errors.ts';
import { checkBundleTrustMarks } from './bundle-trust-marks.ts';
import { onlineFetchOptions, type OnlineStatusOptions } from './statement-status.ts';

type Step = (name: string, detail: string, errors: ChainVerificationError[], skipped?: boolean) => void;

export type TrustChainCheck = {
  jws: string;
  header: Record<string, unknown>;
  fields: TrustBundle;
  anchor: { jwks: { keys: PublishedJwk[] }; registry_id?: string; api_base_url?: string };
  now: Date;
  step: Step;
  online: OnlineStatusOptions | undefined;
  /** Whether to check the bundle's own JWS here (not when the delegation statements' check does it). */
  checkSignature: boolean;
};

/** The name of the step that validates the OIDF chain: present when a bundle was verified through it. */
export const TRUST_CHAIN_STEP = 'OpenID Federation trust chain';

const chainError = (message: string): ChainVerificationError => ({ code: 'TRUST_CHAIN_INVALID', message });

/** Every problem of the bundle when checked through its `trust_chain`; records a step for each check. */
export async function verifyBundleTrustChain(check: TrustChainCheck): Promise<ChainVerificationError[]> {
  const { jws, header, fields, anchor, now, step } = check;
  const chain = fields.trust_chain;
  const title = TRUST_CHAIN_STEP;
  if (!Array.isArray(chain) || chain.length === 0 || !chain.every((jwt) => typeof jwt === 'string')) {
    const errors = [{ code: 'BUNDLE_MALFORMED' as const, message: 'trust_chain is not a list of compact JWSs' }];
    step(title, 'not a list of compact JWSs', errors);
    return errors;
  }
  let valid: ValidTrustChain;
  try {
    const top = readEntityStatement(chain.at(-1) as string, 'the last statement of the trust chain');
    // The anchor's keys are what counts; its address, when the anchor file gives one, must match too.
    const anchorId = anchor.api_base_url ? entityIdentifier(anchor.api_base_url) : top.sub;
    valid = await validateTrustChain(chain, anchorId, anchor.jwks.keys, now);
  } catch (error) {
    if (!(error instanceof OidfError)) throw error;
    step(title, 'does not validate with the anchor’s keys', [chainError(error.message)]);
    return [chainError(error.message)];
  }
  const { statements } = valid;
  const shape = chainMetadataErrors(statements, fields, anchor);
  const path = [statements[0]?.sub, ...statements.slice(1).map((claims) => claims.iss)].filter((id, i, all) => all.indexOf(id) === i);
  step(title, `${path.join(' → ')} (anchored by the trust anchor's keys; valid until ${new Date(valid.exp * 1000).toISOString()})`, shape.errors);
  // The keys the issuer's superior vouches for; at the root, the anchor's own.
  const issuerKeys = statements.length === 1 ? anchor.jwks.keys : (statements[1] as EntityStatementClaims).jwks.keys;
  const signature = check.checkSignature ? await bundleSignatureErrors(jws, header, fields, issuerKeys, now) : [];
  if (check.checkSignature) step('Bundle signature', `signed by ${String(header.kid ?? '?')} of ${fields.issuer}, a key its superior's statement names; valid ${fields.issued_at} to ${fields.expires_at}`, signature);
  const status = check.online ? await onlineErrors(statements, check.online) : [];
  if (check.online) step('Online status', 'each superior still issues its statement (fetched again from its source_endpoint)', status);
  const marks = await checkBundleTrustMarks({ fields, statements, issuerKeys, metadata: shape.metadata, now, online: check.online, step });
  return [...shape.errors, ...signature, ...status, ...marks];
}

/**
 * The chain is about the bundle's issuer, its top is the anchor named, and the subject keeps to the
 * issuer's jurisdiction; with the issuer's resolved metadata, when it resolves.
 */
function chainMetadataErrors(statements: readonly EntityStatementClaims[], fields: TrustBundle, anchor: TrustChainCheck['anchor']): { errors: ChainVerificationError[]; metadata?: EntityMetadata } {
  let metadata: EntityMetadata;
  try {
    metadata = resolveMetadata(statements);
  } catch (error) {
    if (error instanceof OidfError) return { errors: [chainError(error.message)] };
    throw error;
  }
  const ward = metadata[WARD_REGISTRY_ENTITY_TYPE];
  const errors: ChainVerificationError[] = [];
  if (!ward || ward.registry_id !== fields.issuer) errors.push({ code: 'CHAIN_MISMATCH', message: `the trust chain is about ${String(ward?.registry_id ?? statements[0]?.sub)}, not the issuer ${fields.issuer}` });
  const top = (statements.at(-1) as EntityStatementClaims).metadata?.[WARD_REGISTRY_ENTITY_TYPE]?.registry_id;
  if (anchor.registry_id && top !== anchor.registry_id) errors.push({ code: 'CHAIN_MISMATCH', message: `the trust chain ends at ${String(top)}, not the anchor ${anchor.registry_id}` });
  const jurisdiction = /^registry:\/\/([a-zA-Z]{2})\//.exec(fields.subject)?.[1]?.toUpperCase();
  if (ward && jurisdiction !== String(ward.jurisdiction).toUpperCase()) {
    errors.push({ code: 'CONSTRAINT_JURISDICTION', message: `the subject ${fields.subject} lies outside the issuer's jurisdiction ${String(ward.jurisdiction)}` });
  }
  return { errors, metadata };
}

/** Online: each subordinate statement fetched again from its `source_endpoint`, checked with the same issuer keys. */
async function onlineErrors(statements: readonly EntityStatementClaims[], online: OnlineStatusOptions): Promise<ChainVerificationError[]> {
  const options = onlineFetchOptions(online);
  const checks = statements.slice(1, -1).map(async (claims, k): Promise<ChainVerificationError | undefined> => {
    const unavailable = (why: string): ChainVerificationError => ({ code: 'STATUS_UNAVAILABLE', message: `${claims.iss} about ${claims.sub}: ${why}` });
    if (typeof claims.source_endpoint !== 'string') return unavailable('the statement names no source_endpoint');
    const answer = await fetchSubordinateStatement(claims.source_endpoint, claims.sub, options);
    if (!answer.ok) {
      return answer.status === 404 ? { code: 'STATEMENT_REVOKED', message: `${claims.iss} no longer issues a statement about ${claims.sub}: ${answer.message}` } : unavailable(answer.message);
    }
    const header = readProtectedHeader(answer.jwt);
    const keys = (statements[k + 2] as EntityStatementClaims).jwks.keys;
    if (!header || header.typ !== ENTITY_STATEMENT_TYP || offeredKeyMembers(header).length > 0) return unavailable('the fresh statement is not an entity statement');
    const verified = await verifyWithKeySet(answer.jwt, header, keys, new Date());
    const fresh = verified.ok ? (verified.payload as Record<string, unknown>) : undefined;
    if (!fresh || fresh.iss !== claims.iss || fresh.sub !== claims.sub || !(typeof fresh.exp === 'number' && fresh.exp * 1000 > Date.now() - SKEW_MS)) return unavailable('the fresh statement does not verify with the issuer’s keys');
    return undefined;
  });
  return (await Promise.all(checks)).filter((error) => error !== undefined);
}
