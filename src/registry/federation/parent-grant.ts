/**
 * Fetching a delegation grant from the parent (docs/federation.md), through the federation client:
 * this registry presents a self-signed entity configuration, keeps the grant only once it checks, and
 * believes a refusal as revoked only once the parent's signed status says so.
 */
import { decodeJwt } from 'jose';
import { failureKind } from '../../client/federation-client.ts';
import type { RegistryAnswer } from '../../client/registry-answer.ts';
import { verifiedPayload, type PublishedJwk } from '../../core/crypto/key-set.ts';
import { DELEGATION_TYP, STATUS_TYP } from '../../contract/delegation-statement.ts';
import { writeFederationState } from './storage/federation-state-store.ts';
import { ENTITY_CONFIGURATION_TYP, type DelegationGrant } from './child-registry-types.ts';
import { kidsKnownToParent, STATE_NAME, type LinkState } from './parent-link-state.ts';

const ENTITY_CONFIGURATION_LIFETIME_S = 300;

/**
 * Fetches a grant now; resolves false when the parent did not grant one. One fetch at a time: two at
 * once would present entity configurations of the same second, and the parent accepts only the first.
 */
export function refreshGrant(link: LinkState): Promise<boolean> {
  link.inFlight ??= fetchGrant(link).finally(() => {
    link.inFlight = undefined;
  });
  return link.inFlight;
}

async function fetchGrant(link: LinkState): Promise<boolean> {
  const { deps, parent } = link;
  if (!parent || !deps.parentUrl) return false;
  const answer = await parent.delegationGrant(deps.registryId, await entityConfiguration(link));
  if (!answer.ok && answer.status === 403 && answer.envelope.error.code === 'REGISTRY_REVOKED') {
    await confirmRevocation(link);
    return false;
  }
  if (!answer.ok) throw failure(answer);
  if (typeof answer.body !== 'object' || answer.body === null) throw new Error(`the parent answered HTTP ${answer.status}`);
  const grant = await checkedGrant(link, answer.body as Record<string, unknown>);
  const fetchedAt = deps.clock.now().toISOString();
  link.grant = { ...grant, parent_url: deps.parentUrl, parent_id: grant.delegation_chain.at(-2) as string, fetched_at: fetchedAt };
  link.grantReadAt = Date.now();
  await writeFederationState(deps.storage.db, STATE_NAME, link.grant, fetchedAt);
  return true;
}

/** Why the parent's answer is no use: the transport's reason, or the HTTP status it answered. */
function failure(answer: Extract<RegistryAnswer, { ok: false }>): Error {
  return failureKind(answer) === 'answer' ? new Error(`the parent answered HTTP ${answer.status}`) : new Error(`the parent was not read: ${answer.envelope.error.message}`);
}

/**
 * This registry's published keys, signed by its current key and by each key the parent holds for
 * it (after a rotation the parent knows only the old one). A few signatures, not one per key ever
 * published, so the header stays small.
 */
async function entityConfiguration(link: LinkState): Promise<string> {
  const { signer, clock, registryId } = link.deps;
  await signer.refreshIfStale();
  const nowMs = clock.now().getTime();
  const iat = Math.floor(nowMs / 1000);
  // iat_ms orders configurations finer than iat: the parent accepts only ones newer than the last.
  const claims = { iss: registryId, sub: registryId, iat, iat_ms: nowMs, exp: iat + ENTITY_CONFIGURATION_LIFETIME_S, jwks: signer.jwks() };
  return (await signer.signWithKeys(claims, ENTITY_CONFIGURATION_TYP, kidsKnownToParent(link))).join(' ');
}

/**
 * An unsigned 403 proves nothing: the revocation counts only once the parent's status token,
 * checked with the parent keys this registry already holds, says so. Then the chain goes at once.
 */
async function confirmRevocation(link: LinkState): Promise<void> {
  const { deps, parent, grant } = link;
  if (!grant || !parent) throw new Error('the parent refused a grant as revoked; without the keys of an earlier grant that cannot be confirmed');
  const answer = await parent.delegationStatus(deps.registryId);
  if (!answer.ok && failureKind(answer) !== 'answer') throw failure(answer);
  // The body is the parent's word, unchecked: only the signed token in it counts.
  const body = answer.ok ? (answer.body as { status_token?: unknown; reason?: unknown } | null) : undefined;
  const token = body?.status_token;
  if (typeof token !== 'string') throw new Error('the parent refused a grant but gave no status token');
  const now = deps.clock.now();
  const claims = (await verifiedPayload(token, STATUS_TYP, grant.issuer_jwks.keys as PublishedJwk[], now)) as { iss?: unknown; sub?: unknown; status?: unknown; exp?: unknown } | undefined;
  const fresh = typeof claims?.exp === 'number' && claims.exp * 1000 > now.getTime();
  if (claims?.iss !== grant.parent_id || claims.sub !== deps.registryId || claims.status !== 'revoked' || !fresh) {
    throw new Error('the parent refused a grant, but its status token does not confirm a revocation');
  }
  await recordRevocation(link, typeof body?.reason === 'string' ? body.reason : null);
}

/**
 * Stores the revocation once confirmed (by the parent's status token here, or by its OIDF trust mark
 * status: ../oidf/superior-revocation.ts): the chain's statements go at once, and a later fetched_at
 * makes the other instances adopt it when they re-read the stored state. Without a grant (none was
 * ever fetched) the state holds this registry alone, revoked.
 */
export async function recordRevocation(link: LinkState, reason: string | null, parentId?: string): Promise<void> {
  const { deps } = link;
  if (!deps.parentUrl || link.grant?.revoked) return;
  const at = deps.clock.now().toISOString();
  const held = link.grant ?? {
    sub: deps.registryId,
    delegation_chain: [deps.registryId],
    statements: [],
    issuer_jwks: { keys: [] },
    expires_at: at,
    parent_url: deps.parentUrl,
    parent_id: parentId ?? deps.parentUrl,
    fetched_at: at,
  };
  link.grant = { ...held, statements: [], revoked: { reason }, fetched_at: at };
  link.grantReadAt = Date.now();
  await writeFederationState(deps.storage.db, STATE_NAME, link.grant, at);
}

/**
 * A grant is kept only if it is about this registry, names its signing key, is a fresh delegation
 * statement by the registry before it in the chain, and comes with keys this registry can tie to
 * that parent: under a sovereign, the keys its grandparent's statement names.
 */
async function checkedGrant(link: LinkState, body: Record<string, unknown>): Promise<DelegationGrant> {
  const { registryId, signer, clock } = link.deps;
  const grant = body as unknown as DelegationGrant;
  const { delegation_chain: chain, statements } = grant;
  if (!Array.isArray(chain) || !Array.isArray(statements) || chain.at(-1) !== registryId || statements.length !== chain.length - 1 || chain.length < 2) {
    throw new Error('the parent answered a grant for another registry or a broken chain');
  }
  const parentId = chain.at(-2) as string;
  const held = link.grant;
  if (held && !held.revoked && held.parent_id !== parentId) throw new Error(`the grant is from ${parentId}, not from ${held.parent_id}`);
  const issuerKeys = keysDelegatedToParent(grant);
  // Under a root nothing above vouches for its keys: they are as good as the configured parent URL,
  // which production requires to be https (a root may retire a key at once, so no continuity is asked).
  const statement = statements.at(-1) as string;
  const now = clock.now();
  const claims = (await verifiedPayload(statement, DELEGATION_TYP, issuerKeys as PublishedJwk[], now)) as
    | { iss?: string; sub?: string; exp?: number; jwks?: { keys?: Array<{ kid?: string }> } }
    | undefined;
  if (typeof claims !== 'object' || claims === null) throw new Error("the grant's statement is not a delegation statement verified by the parent's keys");
  if (claims.iss !== parentId || claims.sub !== registryId) throw new Error('the statement names another issuer or subject');
  if (typeof claims.exp !== 'number' || claims.exp * 1000 <= now.getTime()) throw new Error('the statement has expired');
  if (!claims.jwks?.keys?.some((key) => key.kid === signer.kid)) throw new Error("the statement does not name this registry's signing key yet");
  return { ...grant, issuer_jwks: { keys: issuerKeys } };
}

/**
 * The parent keys the grant offers that count: all of them under a root; under a sovereign only those
 * the grandparent delegated to the parent (a key the parent has just rotated in counts once the
 * grandparent's statement names it).
 */
function keysDelegatedToParent(grant: DelegationGrant): DelegationGrant['issuer_jwks']['keys'] {
  const offered = grant.issuer_jwks?.keys;
  if (!Array.isArray(offered) || offered.length === 0) throw new Error('the grant carries no parent keys');
  const above = grant.statements.at(-2);
  if (above === undefined) return offered;
  const named = ((decodeJwt(above).jwks as { keys?: Array<{ kid?: unknown }> } | undefined)?.keys ?? []).map((key) => key.kid);
  const issuerKeys = offered.filter((key) => named.includes(key.kid));
  if (issuerKeys.length === 0) throw new Error("none of the parent's keys is one its own parent delegated to it");
  return issuerKeys;
}
