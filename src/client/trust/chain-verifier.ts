// Walking the delegation statements of a trust bundle from the anchor down (docs/federation.md). Each
// statement is checked with keys the walk already trusts, and only then are its own keys trusted for the
// next level; a statement that cannot be verified ends the walk, since nothing below it can be.
import { normaliseJurisdiction } from '../../core/jurisdictions.ts';
import {
  DELEGATION_TYP,
  readDelegationClaims,
  type DelegationStatementClaims,
  type RegistryTier,
} from '../../contract/delegation-statement.ts';
import type { ChainVerificationCode, ChainVerificationError } from './chain-errors.ts';
import { SKEW_MS, hasPrivateKeyMaterial, offeredKeyMembers, readProtectedHeader, verifyWithKeySet, type KeySetVerification, type PublishedJwk } from '../../core/crypto/key-set.ts';

/** A statement whose signature verified with its issuer's keys (other checks may still have failed). */
export type CheckedStatement = { index: number; claims: DelegationStatementClaims; issuerKeys: readonly PublishedJwk[]; kid: string | undefined };

export type ChainWalk = {
  errors: ChainVerificationError[];
  /** Signature-verified statements, in order from index 0 without gaps. */
  statements: CheckedStatement[];
  /** The keys of the last link, or `undefined` when the walk could not reach it. */
  keys: readonly PublishedJwk[] | undefined;
};

const TIER_RANK: Readonly<Record<RegistryTier, number>> = { root: 0, sovereign: 1, organisational: 2 };

const KEY_PROBLEM_CODES: Readonly<Record<Extract<KeySetVerification, { ok: false }>['problem'], ChainVerificationCode>> = {
  'key-unknown': 'STATEMENT_KEY_UNKNOWN',
  'key-expired': 'KEY_EXPIRED',
  'key-not-yet-valid': 'KEY_NOT_YET_VALID',
  'signature-invalid': 'STATEMENT_SIGNATURE_INVALID',
  'payload-not-json': 'STATEMENT_MALFORMED',
};

/**
 * Verifies `statements[i]` as the statement by `chain[i]` about `chain[i + 1]`, starting from the
 * anchor's keys: header (no key offered, `typ`), key and signature, issuer and subject, validity window
 * (60 s skew), and the constraints of every statement above it and of itself.
 */
export async function walkDelegationChain(
  chain: readonly string[],
  statements: readonly unknown[],
  anchorKeys: readonly PublishedJwk[],
  now: Date,
): Promise<ChainWalk> {
  const errors: ChainVerificationError[] = [];
  const checked: CheckedStatement[] = [];
  let keys = anchorKeys;
  for (const [index, token] of statements.entries()) {
    const report = (code: ChainVerificationCode, message: string) => errors.push({ code, message: `${statementLabel(index, chain)}: ${message}`, statement: index });
    const header = readProtectedHeader(token);
    if (!header) {
      report('STATEMENT_MALFORMED', 'not a compact JWS');
      return { errors, statements: checked, keys: undefined };
    }
    const offered = offeredKeyMembers(header);
    if (offered.length > 0) report('KEY_URL_REFUSED', `the header offers a key (${offered.join(', ')}); keys come only from the level above`);
    if (header.typ !== DELEGATION_TYP) report('STATEMENT_MALFORMED', `typ is not ${DELEGATION_TYP}`);
    const verified = await verifyWithKeySet(token as string, header, keys, now);
    if (!verified.ok) {
      report(KEY_PROBLEM_CODES[verified.problem], verified.message);
      return { errors, statements: checked, keys: undefined };
    }
    const read = readDelegationClaims(verified.payload);
    if ('problem' in read) {
      report('STATEMENT_MALFORMED', read.problem);
      return { errors, statements: checked, keys: undefined };
    }
    const statement: CheckedStatement = { index, claims: read.claims, issuerKeys: keys, kid: typeof header.kid === 'string' ? header.kid : undefined };
    for (const [code, message] of statementProblems(statement, chain, checked, now)) report(code, message);
    checked.push(statement);
    keys = read.claims.jwks.keys.filter((key) => !hasPrivateKeyMaterial(key));
    if (keys.length < read.claims.jwks.keys.length) report('STATEMENT_MALFORMED', 'jwks carries private key material');
  }
  return { errors, statements: checked, keys };
}

type Problem = [ChainVerificationCode, string];

function statementProblems(statement: CheckedStatement, chain: readonly string[], above: readonly CheckedStatement[], now: Date): Problem[] {
  const { claims, index } = statement;
  const problems: Problem[] = [];
  const issuer = chain[index];
  const subject = chain[index + 1];
  if (issuer !== undefined && claims.iss !== issuer) problems.push(['STATEMENT_WRONG_ISSUER', `iss is ${claims.iss}, not ${issuer}`]);
  if (subject !== undefined && claims.sub !== subject) problems.push(['CHAIN_MISMATCH', `sub is ${claims.sub}, not ${subject}`]);
  const nowMs = now.getTime();
  if (nowMs >= claims.exp * 1000 + SKEW_MS) problems.push(['STATEMENT_EXPIRED', `expired at ${isoSeconds(claims.exp)}`]);
  if (nowMs < claims.nbf * 1000 - SKEW_MS) problems.push(['STATEMENT_NOT_YET_VALID', `not valid before ${isoSeconds(claims.nbf)}`]);

  const parentTier = above.at(-1)?.claims.tier ?? 'root';
  if (TIER_RANK[claims.tier] <= TIER_RANK[parentTier]) problems.push(['CONSTRAINT_TIER', `a ${claims.tier} registry cannot sit below a ${parentTier} one`]);
  for (const ancestor of above) {
    const depth = index - ancestor.index;
    const allowed = ancestor.claims.constraints.max_path_length;
    if (depth > allowed) {
      problems.push(['CONSTRAINT_PATH_LENGTH', `statement ${ancestor.index} allows ${allowed} statement(s) below ${ancestor.claims.sub}; this is number ${depth}`]);
    }
  }
  problems.push(...jurisdictionProblems(claims, [...above, statement]));
  return problems;
}

function jurisdictionProblems(claims: DelegationStatementClaims, constraining: readonly CheckedStatement[]): Problem[] {
  const fromUri = registryUriJurisdiction(claims.sub);
  const declared = normaliseJurisdiction(claims.jurisdiction);
  if (!fromUri) return [['STATEMENT_MALFORMED', 'sub is not a registry URI registry://<jurisdiction>/registries/<name>']];
  if (!declared) return [['STATEMENT_MALFORMED', 'jurisdiction is not an ISO 3166-1 alpha-2 code']];
  const problems: Problem[] = [];
  if (fromUri !== declared) problems.push(['CONSTRAINT_JURISDICTION', `sub is in ${fromUri} but the statement says ${declared}`]);
  for (const ancestor of constraining) {
    const outside = [...new Set([fromUri, declared])].filter((code) => !allowedJurisdictions(ancestor).has(code));
    if (outside.length > 0) problems.push(['CONSTRAINT_JURISDICTION', `${outside.join(', ')} is outside what statement ${ancestor.index} allows`]);
  }
  return problems;
}

/**
 * The constraints of the verified statements applied to the bundle's own subject when it is an agent
 * or registry URI: its jurisdiction must be one every statement allows.
 */
export function subjectConstraintErrors(subject: string, statements: readonly CheckedStatement[]): ChainVerificationError[] {
  const jurisdiction = agentUriJurisdiction(subject) ?? registryUriJurisdiction(subject);
  // A subject the constraints cannot be applied to is not one a registry issues bundles for.
  if (!jurisdiction) return [{ code: 'BUNDLE_MALFORMED', message: `bundle subject ${subject} is neither an agent URI nor a registry URI` }];
  return statements
    .filter((statement) => !allowedJurisdictions(statement).has(jurisdiction))
    .map((statement) => ({
      code: 'CONSTRAINT_JURISDICTION',
      message: `bundle subject ${subject}: ${jurisdiction} is outside what statement ${statement.index} allows`,
    }));
}

function allowedJurisdictions(statement: CheckedStatement): ReadonlySet<string> {
  return new Set(statement.claims.constraints.allowed_jurisdictions.map((code) => code.toUpperCase()));
}

const REGISTRY_URI = /^registry:\/\/([A-Za-z]{2})\/registries\/[^/?#\s]+$/;
const AGENT_URI = /^registry:\/\/([A-Za-z]{2})\/agents\/[0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{26}$/;

function registryUriJurisdiction(uri: string): string | undefined {
  const match = REGISTRY_URI.exec(uri);
  return match ? normaliseJurisdiction(match[1] as string) : undefined;
}

function agentUriJurisdiction(uri: string): string | undefined {
  const match = AGENT_URI.exec(uri);
  return match ? normaliseJurisdiction(match[1] as string) : undefined;
}

function statementLabel(index: number, chain: readonly string[]): string {
  return `statement ${index} (${chain[index] ?? '?'} → ${chain[index + 1] ?? '?'})`;
}

function isoSeconds(seconds: number): string {
  const date = new Date(seconds * 1000);
  return Number.isNaN(date.getTime()) ? String(seconds) : date.toISOString();
}
