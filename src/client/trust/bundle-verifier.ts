import type { ChainVerificationError } from './chain-errors.ts';
import { subjectConstraintErrors, walkDelegationChain, type CheckedStatement } from './chain-verifier.ts';
import { readProtectedHeader, type PublishedJwk } from '../../core/crypto/key-set.ts';
import { bundleSignatureErrors } from './bundle-signature.ts';
import { verifyBundleTrustChain } from './oidf-chain-check.ts';
export { TRUST_CHAIN_STEP } from './oidf-chain-check.ts';
export { TRUST_MARKS_STEP, TRUST_MARK_STATUS_STEP } from './bundle-trust-marks.ts';
import { checkStatementStatuses, type OnlineStatusOptions } from './statement-status.ts';
import type { TrustBundle } from '../../contract/trust-bundle.ts';

/**
 * What the verifier trusts: the root's public keys (each optionally bounded by `not_before` /
 * `not_after`), and optionally which registry it is and where it answers (needed online).
 */
export type TrustAnchorInput = { jwks: { keys: PublishedJwk[] }; registry_id?: string; api_base_url?: string };

export type BundleVerificationError = ChainVerificationError;

/**
 * One check of the verification, in the order it was made, for a person to read (the console shows
 * them): `skipped` when an earlier failure left nothing to check it with.
 */
export type VerificationStep = { name: string; status: 'passed' | 'failed' | 'skipped'; detail: string; errors: BundleVerificationError[] };

/**
 * The issuer's keys are proven by the OpenID Federation `trust_chain` when the bundle carries one
 * (preferred: then `steps` has {@link TRUST_CHAIN_STEP}), else by Ward's delegation `statements`.
 */
export type BundleVerification = { valid: boolean; subject?: string; errors: BundleVerificationError[]; steps: VerificationStep[] };

export type BundleVerificationOptions = {
  /** Also ask each statement's issuer for a signed status (fails closed when it cannot be had). */
  online?: OnlineStatusOptions;
};


/**
 * Verifies a trust bundle against a trust anchor (docs/federation.md, "Verifying a chain"): the chain
 * runs from the anchor to the issuer, every delegation statement verifies with keys taken only from the
 * anchor and the statements above it and keeps to their constraints, and the bundle's JWS verifies with
 * the issuer's keys, equals the bundle's other fields and is inside its validity window. A `jku`, `x5u`,
 * `jwk` or `x5c` header is refused, never followed. Offline unless `options.online` is given.
 * Reports every problem it can still meaningfully check; `valid` only when there is none.
 */
export async function verifyTrustBundle(
  bundle: unknown,
  anchor: TrustAnchorInput,
  now: Date = new Date(),
  options: BundleVerificationOptions = {},
): Promise<BundleVerification> {
  if (!Array.isArray(anchor.jwks?.keys)) throw new TypeError('the trust anchor needs jwks.keys');
  const steps: VerificationStep[] = [];
  const step = (name: string, detail: string, errors: BundleVerificationError[], skipped = false) =>
    steps.push({ name, status: skipped ? 'skipped' : errors.length === 0 ? 'passed' : 'failed', detail, errors });
  const anchorKids = anchor.jwks.keys.map((key) => key.kid ?? '(no kid)');
  step('Trust anchor', `${anchorKids.length} key(s): ${anchorKids.join(', ')}${anchor.registry_id ? ` of ${anchor.registry_id}` : ''}`, []);
  const malformed = (message: string) => {
    const errors = [{ code: 'BUNDLE_MALFORMED' as const, message }];
    step('Bundle form', message, errors);
    return { valid: false, errors, steps };
  };
  if (!isBundleShape(bundle)) return malformed('not a signed trust bundle');
  const { signed_bundle: jws, ...fields } = bundle;
  const header = readProtectedHeader(jws);
  if (!header) return malformed('signed_bundle is not a compact JWS');
  // The migration (docs/federation.md, "One chain"): a bundle carrying only the OIDF trust_chain holds
  // by it alone; one carrying Ward's statements too must hold by both (its own signature checked once).
  // A trust anchor's own bundle (its chain is its configuration alone) has no statements to carry: it
  // is checked both ways too, so its findings keep their precise codes (an expired bundle, a foreign key).
  const anchorsOwn = bundle.trust_chain?.length === 1;
  const legacy = bundle.trust_chain === undefined || fields.statements.length > 0 || anchorsOwn;
  const oidf = bundle.trust_chain === undefined ? [] : await verifyBundleTrustChain({ jws, header, fields, anchor, now, step, online: options.online, checkSignature: !legacy });
  if (!legacy) return { valid: oidf.length === 0, subject: fields.subject, errors: oidf, steps };
  const shape = chainShapeErrors(fields, anchor);
  step('Delegation chain', fields.delegation_chain.join(' → ') || '(empty)', shape);

  const walk = await walkDelegationChain(fields.delegation_chain, fields.statements, anchor.jwks.keys, now);
  fields.statements.forEach((_, index) => {
    const checked = walk.statements[index];
    const errors = walk.errors.filter((error) => error.statement === index);
    const label = `Statement ${index + 1}: ${fields.delegation_chain[index] ?? '?'} → ${fields.delegation_chain[index + 1] ?? '?'}`;
    if (!checked && errors.length === 0) step(label, 'not checked: a statement above it failed', [], true);
    else step(label, checked ? describeStatement(checked) : 'its signature could not be verified with the keys above it', errors);
  });
  const constraints = subjectConstraintErrors(fields.subject, walk.statements);
  step('Subject constraints', `${fields.subject} within every statement's allowed jurisdictions`, constraints);
  // A broken walk leaves no trusted issuer key, so the bundle's own signature cannot be judged.
  const signature = walk.keys ? await bundleSignatureErrors(jws, header, fields, walk.keys, now) : [];
  step(
    'Bundle signature',
    walk.keys ? `signed by ${String(header.kid ?? '?')} of ${fields.issuer}; valid ${fields.issued_at} to ${fields.expires_at}` : "not checked: the issuer's keys were not reached",
    signature,
    !walk.keys,
  );
  const status = options.online ? await checkStatementStatuses(walk.statements, anchor.api_base_url, now, options.online) : [];
  if (options.online) step('Online status', 'each issuer confirms its statement is still active', status);
  const wardErrors = [...shape, ...walk.errors, ...constraints, ...signature, ...status];
  // One fault (an expired or foreign link, a retired key) usually breaks both chains: while a bundle
  // carries both, Ward's findings are reported, and the OIDF chain's once those pass.
  const errors = wardErrors.length > 0 ? wardErrors : oidf;
  return { valid: errors.length === 0, subject: fields.subject, errors, steps };
}

function describeStatement(statement: CheckedStatement): string {
  const { claims } = statement;
  const window = `${new Date(claims.nbf * 1000).toISOString()} to ${new Date(claims.exp * 1000).toISOString()}`;
  return `signed by key ${statement.kid ?? '?'} of ${claims.iss}; ${claims.tier} registry for ${claims.jurisdiction}; valid ${window}; at most ${claims.constraints.max_path_length} level(s) below`;
}

function chainShapeErrors(fields: TrustBundle, anchor: TrustAnchorInput): BundleVerificationError[] {
  const chain = fields.delegation_chain;
  const mismatch = (message: string): BundleVerificationError => ({ code: 'CHAIN_MISMATCH', message });
  if (chain.length === 0) return [mismatch('the delegation chain is empty')];
  const errors: BundleVerificationError[] = [];
  if (chain.at(-1) !== fields.issuer) errors.push(mismatch('the delegation chain does not end at the issuer'));
  if (anchor.registry_id && chain[0] !== anchor.registry_id) errors.push(mismatch('the delegation chain does not start at the anchor'));
  if (fields.statements.length < chain.length - 1) errors.push(mismatch('the chain has links without a delegation statement'));
  if (fields.statements.length > chain.length - 1) errors.push(mismatch('there are more delegation statements than links in the chain'));
  // A registry appears once: a child named like an ancestor would otherwise speak as that ancestor.
  if (new Set(chain).size !== chain.length) errors.push(mismatch('a registry appears more than once in the delegation chain'));
  if (anchor.registry_id && chain.slice(1).includes(anchor.registry_id)) errors.push(mismatch('a statement names the anchor itself as a subject'));
  return errors;
}

function isBundleShape(value: unknown): value is TrustBundle & { signed_bundle: string } {
  if (typeof value !== 'object' || value === null) return false;
  const b = value as Record<string, unknown>;
  return (
    typeof b.signed_bundle === 'string' &&
    typeof b.subject === 'string' &&
    typeof b.issuer === 'string' &&
    typeof b.issued_at === 'string' &&
    typeof b.expires_at === 'string' &&
    Array.isArray(b.delegation_chain) &&
    b.delegation_chain.every((link) => typeof link === 'string') &&
    Array.isArray(b.statements)
  );
}
