/**
 * Validating a trust chain (OIDF §10.2) and its constraints (OIDF §6.2), pure: the entity statements
 * from the subject's entity configuration ES[0] up to the trust anchor's ES[i], as compact JWSs. Each
 * must be typed `entity-statement+jwt`, offer no key of its own, be inside `iat`..`exp` (60 s of skew,
 * as everywhere in Ward), and be signed by a key of the statement above it: ES[0] by its own keys,
 * ES[j] by ES[j+1]'s `jwks`, ES[i] by the trust anchor's keys. So a subject whose key rolled over
 * without its superior's statement naming the new key fails here, as does a statement from anyone
 * but the subject's superior. Any failure is `invalid_trust_chain`.
 */
import { decodeJwt } from 'jose';
import { ENTITY_STATEMENT_TYP, FEDERATION_ENTITY_TYPE, type EntityStatementClaims, type OidfConstraints } from '../../contract/openid-federation.ts';
import { SKEW_MS, offeredKeyMembers, readProtectedHeader, verifyWithKeySet, type PublishedJwk } from '../../core/crypto/key-set.ts';
import { OidfError } from './oidf-error.ts';

/** A trust chain that passed: its statements' claims, and when the first of them expires. */
export type ValidTrustChain = { statements: EntityStatementClaims[]; exp: number };

const invalid = (message: string) => new OidfError('invalid_trust_chain', message);

/** The claims of `jwt` read without verifying, when they have the shape of an entity statement. */
export function readEntityStatement(jwt: string, what: string): EntityStatementClaims {
  const header = readProtectedHeader(jwt);
  if (!header) throw invalid(`${what} is not a compact JWS.`);
  if (header.typ !== ENTITY_STATEMENT_TYP) throw invalid(`${what} is not typed ${ENTITY_STATEMENT_TYP}.`);
  if (typeof header.kid !== 'string' || header.kid === '') throw invalid(`${what} names no kid.`);
  if (offeredKeyMembers(header).length > 0) throw invalid(`${what} offers a key in its header (${offeredKeyMembers(header).join(', ')}).`);
  let claims: Record<string, unknown>;
  try {
    claims = decodeJwt(jwt) as Record<string, unknown>;
  } catch {
    throw invalid(`${what} has no JSON claims.`);
  }
  if (typeof claims.iss !== 'string' || typeof claims.sub !== 'string') throw invalid(`${what} lacks iss or sub.`);
  if (!Number.isFinite(claims.iat) || !Number.isFinite(claims.exp)) throw invalid(`${what} lacks iat or exp.`);
  const jwks = claims.jwks as { keys?: unknown } | undefined;
  if (!jwks || !Array.isArray(jwks.keys)) throw invalid(`${what} has no jwks.`);
  const problem = shapeProblem(claims);
  if (problem) throw invalid(`${what} ${problem}.`);
  return claims as unknown as EntityStatementClaims;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isNameList = (value: unknown) => Array.isArray(value) && value.every((item) => typeof item === 'string');

/**
 * What of the claims the chain's checks read is not of the shape OIDF gives it: an answer the caller
 * can act on (`invalid_trust_chain`) instead of a TypeError deep in validation.
 */
function shapeProblem(claims: Record<string, unknown>): string | undefined {
  if (claims.authority_hints !== undefined && !isNameList(claims.authority_hints)) return 'has authority_hints that are not a list of entity identifiers';
  if (claims.crit !== undefined && !isNameList(claims.crit)) return 'has a crit that is not a list of claim names';
  for (const member of ['metadata', 'metadata_policy', 'constraints'] as const) {
    const value = claims[member];
    if (value === undefined) continue;
    if (!isObject(value)) return `has a ${member} that is not an object`;
    if (member !== 'constraints' && !Object.values(value).every(isObject)) return `has a ${member} whose entity types are not objects`;
  }
  const policy = claims.metadata_policy as Record<string, Record<string, unknown>> | undefined;
  if (policy && !Object.values(policy).every((parameters) => Object.values(parameters).every(isObject))) return 'has a metadata_policy whose parameters are not objects';
  const naming = (claims.constraints as Record<string, unknown> | undefined)?.naming_constraints;
  if (naming !== undefined && !(isObject(naming) && ['permitted', 'excluded'].every((key) => naming[key] === undefined || isNameList(naming[key])))) {
    return 'has naming_constraints that are not lists of names';
  }
  return undefined;
}

async function checkSignature(jwt: string, keys: readonly PublishedJwk[], now: Date, what: string, signer: string): Promise<void> {
  const header = readProtectedHeader(jwt) as Record<string, unknown>;
  const verified = await verifyWithKeySet(jwt, header, keys, now);
  if (!verified.ok) throw invalid(`${what} does not verify with the keys of ${signer}: ${verified.message}.`);
}

function checkTimes(claims: EntityStatementClaims, now: Date, what: string): void {
  if (!(claims.iat * 1000 <= now.getTime() + SKEW_MS)) throw invalid(`${what} is issued in the future.`);
  if (!(claims.exp * 1000 > now.getTime() - SKEW_MS)) throw invalid(`${what} has expired.`);
}

/** The label of ES[j] in messages. */
function label(j: number, last: number, claims: EntityStatementClaims): string {
  if (j === 0) return `the entity configuration of ${claims.sub}`;
  if (j === last) return `the trust anchor's entity configuration (${claims.sub})`;
  return `the statement of ${claims.iss} about ${claims.sub}`;
}

/**
 * Validates `chain` (ES[0] … ES[i], i ≥ 1) ending at `trustAnchor`, whose keys are `anchorKeys` when
 * the caller holds them (else the keys its own configuration states). Then applies every subordinate
 * statement's constraints. Throws `invalid_trust_chain` naming the first problem.
 */
export async function validateTrustChain(chain: readonly string[], trustAnchor: string, anchorKeys: readonly PublishedJwk[] | undefined, now: Date): Promise<ValidTrustChain> {
  // One statement: the subject is the trust anchor. Otherwise at least one subordinate statement links them.
  if (chain.length === 0 || chain.length === 2) throw invalid('A trust chain is the trust anchor alone, or runs subject, superior statements, trust anchor.');
  const last = chain.length - 1;
  const statements = chain.map((jwt, j) => readEntityStatement(jwt, `statement ${j}`));
  for (const [j, claims] of statements.entries()) {
    const what = label(j, last, claims);
    checkTimes(claims, now, what);
    if (claims.crit !== undefined) throw invalid(`${what} marks claims critical (${claims.crit.join(', ')}) that are not understood here.`);
    if (claims.metadata_policy_crit !== undefined) throw invalid(`${what} needs policy operators not understood here (${claims.metadata_policy_crit.join(', ')}).`);
    const selfSigned = j === 0 || j === last;
    if (selfSigned !== (claims.iss === claims.sub)) throw invalid(`${what} has iss ${claims.iss} where ${selfSigned ? 'its sub' : 'a superior'} belongs.`);
    const above = statements[j + 1];
    if (above && claims.iss !== above.sub) throw invalid(`${what} is not followed by a statement about its issuer ${claims.iss}.`);
    if (j === last) await checkSignature(chain[j] as string, anchorKeys ?? claims.jwks.keys, now, what, 'the trust anchor');
    else if (j === 0) {
      await checkSignature(chain[j] as string, claims.jwks.keys, now, what, claims.iss);
      // And by a key its superior's statement names: a key rolled over without a new statement fails here.
      await checkSignature(chain[j] as string, (above as EntityStatementClaims).jwks.keys, now, what, `${above?.iss} as its superior states them`);
    } else await checkSignature(chain[j] as string, (above as EntityStatementClaims).jwks.keys, now, what, claims.iss);
  }
  if ((statements[last] as EntityStatementClaims).sub !== trustAnchor) throw invalid(`The chain ends at ${statements[last]?.sub}, not at the trust anchor ${trustAnchor}.`);
  if (last >= 2 && !(statements[0]?.authority_hints ?? []).includes((statements[1] as EntityStatementClaims).iss)) {
    throw invalid(`${statements[1]?.iss} is not among the authority_hints of ${statements[0]?.sub}.`);
  }
  applyConstraints(statements);
  return { statements, exp: Math.min(...statements.map((claims) => claims.exp)) };
}

/** OIDF §6.2: each subordinate statement's constraints hold for the chain below its issuer. */
function applyConstraints(statements: readonly EntityStatementClaims[]): void {
  const last = statements.length - 1;
  for (let k = 1; k < last; k += 1) {
    const claims = statements[k] as EntityStatementClaims;
    const constraints: OidfConstraints = claims.constraints ?? {};
    // Intermediates between the issuer of ES[k] and the subject: the subjects of ES[1] … ES[k-1]'s issuers.
    const intermediates = k - 1;
    if (constraints.max_path_length !== undefined && intermediates > constraints.max_path_length) {
      throw invalid(`${claims.iss} allows ${constraints.max_path_length} intermediate(s) below it; the chain has ${intermediates}.`);
    }
    const naming = constraints.naming_constraints;
    if (naming) {
      for (const subordinate of statements.slice(0, k + 1).map((statement) => statement.sub)) checkName(subordinate, naming, claims.iss);
    }
  }
}

/** RFC 5280 §4.2.1.10 domain constraints on the host of `entityId` (OIDF §6.2.2). */
function checkName(entityId: string, naming: NonNullable<OidfConstraints['naming_constraints']>, issuer: string): void {
  let host: string;
  try {
    host = new URL(entityId).hostname.toLowerCase();
  } catch {
    throw invalid(`${entityId} is not a URL.`);
  }
  const matches = (name: string) => (name.startsWith('.') ? host.endsWith(name.toLowerCase()) : host === name.toLowerCase());
  if ((naming.excluded ?? []).some(matches)) throw invalid(`${issuer} excludes the name of ${entityId}.`);
  if (naming.permitted && !naming.permitted.some(matches)) throw invalid(`${issuer} does not permit the name of ${entityId}.`);
}

/** The entity types every subordinate statement's `allowed_entity_types` lets the subject keep (undefined: any). */
export function allowedEntityTypes(statements: readonly EntityStatementClaims[]): Set<string> | undefined {
  let allowed: Set<string> | undefined;
  for (const claims of statements.slice(1, -1)) {
    const types = claims.constraints?.allowed_entity_types;
    if (!types) continue;
    const these = new Set([FEDERATION_ENTITY_TYPE, ...types]);
    allowed = allowed ? new Set([...allowed].filter((type) => these.has(type))) : these;
  }
  return allowed;
}
