/**
 * Whether this registry's superior revoked it, as OpenID Federation tells it (docs/federation.md,
 * "Revocation through OpenID Federation"; docs/decisions.md 92). A superior's fetch endpoint answering
 * `not_found` about this registry proves nothing by itself: the answer is unsigned, and anyone between
 * the two could send it. It counts only once the superior's trust mark status endpoint, asked about the
 * `delegated-registry` mark it issued this registry, answers a signed `trust-mark-status-response+jwt`
 * saying `revoked`, verified with the superior's keys from the last chain this registry validated
 * (never with keys from the answer itself).
 */
import { postTrustMarkStatus } from '../../../client/openid-federation-client.ts';
import { freshStatusAnswer } from '../../../client/oidf/trust-mark-status.ts';
import { TRUST_MARK_STATUS_TYP, type WardTrustMarkType } from '../../../contract/oidf-trust-marks.ts';
import { verifiedPayload } from '../../../core/crypto/key-set.ts';
import type { OidfDeps } from './oidf-deps.ts';
import type { SuperiorView } from './superior-view.ts';

/** The mark whose status stands for the registration itself. */
const DELEGATED_REGISTRY_MARK: WardTrustMarkType = 'urn:ward:trust-mark:delegated-registry';

export type RevocationCheck = { revoked: true } | { revoked: false; why: string };

/**
 * Asks `superiorId`'s status endpoint (`statusEndpoint`, as its configuration names it) about the
 * delegated-registry mark held, and judges the answer with the keys of the last valid chain.
 */
export async function revocationBySuperior(
  deps: Pick<OidfDeps, 'config' | 'clock' | 'fetch'>,
  view: SuperiorView,
  superiorId: string,
  statusEndpoint: unknown,
): Promise<RevocationCheck> {
  const keys = view.superior?.entityId === superiorId ? view.superior.keys : undefined;
  if (!keys) return { revoked: false, why: `no chain through ${superiorId} was validated yet, so no key of it can check an answer` };
  const mark = view.marks.get(DELEGATED_REGISTRY_MARK);
  if (!mark) return { revoked: false, why: `no ${DELEGATED_REGISTRY_MARK} mark from ${superiorId} is held to ask about` };
  if (typeof statusEndpoint !== 'string') return { revoked: false, why: `${superiorId} names no federation_trust_mark_status_endpoint` };
  const answer = await postTrustMarkStatus(statusEndpoint, mark, { fetch: deps.fetch, timeoutMs: deps.config.REGISTRY_FEDERATION_TIMEOUT_MS });
  if (!answer.ok) return { revoked: false, why: answer.message };
  const now = deps.clock.now();
  const claims = (await verifiedPayload(answer.jwt, TRUST_MARK_STATUS_TYP, keys, now)) as
    | { iss?: unknown; iat?: unknown; trust_mark?: unknown; status?: unknown }
    | undefined;
  if (typeof claims !== 'object' || claims === null) return { revoked: false, why: `the status answer is not a ${TRUST_MARK_STATUS_TYP} signed by a key of ${superiorId}'s last valid chain` };
  if (claims.iss !== superiorId || claims.trust_mark !== mark) return { revoked: false, why: 'the status answer is about another issuer or mark' };
  if (!freshStatusAnswer(claims.iat, now)) return { revoked: false, why: 'the status answer is not fresh' };
  if (claims.status !== 'revoked') return { revoked: false, why: `the mark's status is ${String(claims.status)}` };
  return { revoked: true };
}
