/**
 * The trust marks a child registry's parent issues about it (the `registry` marks of
 * ../../contract/oidf-trust-marks.ts), kept for the child's entity configuration (OIDF §3.1.1, §7: the
 * subject carries its marks). Each is fetched from the parent's trust mark endpoint (OIDF §8.6) when
 * the configuration is asked for and the mark held is missing or a third through its life, at most
 * once per {@link RETRY_MS} while the parent fails; a mark the parent no longer issues (`not_found`:
 * the child was revoked) is dropped at once, and one that expires is never served. The last mark
 * received stays in the superior view (./superior-view.ts), to ask its status, but only once it
 * verifies with the superior's keys from the last validated chain and names this very registry
 * ({@link verifiedSuperiorMark}): a middlebox could otherwise hand over a genuine mark about the
 * registry that stood at this address before, whose status the superior rightly answers `revoked`.
 */
import { TRUST_MARK_TYP, WARD_TRUST_MARKS, trustMarkEntry, type TrustMarkClaims, type TrustMarkEntry } from '../../../contract/oidf-trust-marks.ts';
import { fetchTrustMark } from '../../../client/openid-federation-client.ts';
import { decodeJwt } from 'jose';
import { verifiedPayload } from '../../../core/crypto/key-set.ts';
import { ownEntityId, parentEntityId } from './entity-configuration.ts';
import type { OidfDeps } from './oidf-deps.ts';
import type { SuperiorKeys } from './superior-view.ts';

/** How long after a failed fetch the parent is asked again. */
const RETRY_MS = 10_000;

type Held = { entry: TrustMarkEntry; iat: number; exp: number };

/** The marks held about this registry now, refreshed from the parent as needed; never throws. */
export function createHeldTrustMarks(
  deps: Pick<OidfDeps, 'config' | 'clock' | 'baseUrl' | 'fetch' | 'superiorView' | 'registryId'>,
  log: (message: string, error?: unknown) => void = () => {},
): () => Promise<TrustMarkEntry[]> {
  const held = new Map<string, Held>();
  let retryAt = 0;
  let inFlight: Promise<void> | undefined;
  const types = WARD_TRUST_MARKS.filter((mark) => mark.subject === 'registry').map((mark) => mark.type);

  const due = (nowMs: number) => types.some((type) => {
    const mark = held.get(type);
    return !mark || nowMs >= (mark.iat + (mark.exp - mark.iat) / 3) * 1000;
  });

  async function refresh(parent: string): Promise<void> {
    const sub = ownEntityId(deps);
    let failed = false;
    for (const type of types) {
      const answer = await fetchTrustMark(parent, type, sub, { fetch: deps.fetch, timeoutMs: deps.config.REGISTRY_FEDERATION_TIMEOUT_MS });
      if (answer.ok) {
        const claims = readMark(answer.jwt, { parent, sub, type, registryId: deps.registryId });
        if (claims) {
          held.set(type, { entry: trustMarkEntry(type, answer.jwt), ...claims });
          await keepVerified(type, answer.jwt);
        } else failed = true;
      } else if (answer.status === 404) held.delete(type);
      else failed = true;
    }
    retryAt = failed ? deps.clock.now().getTime() + RETRY_MS : 0;
  }

  // Kept after the parent stops issuing it, its status is how a revocation is confirmed: so only a mark
  // the superior's validated keys stand behind, about this registry. Before any chain validated there
  // are no such keys: the chain, once valid, keeps the mark its configuration carried (./own-trust-chain.ts).
  async function keepVerified(type: string, jwt: string): Promise<void> {
    const view = deps.superiorView;
    if (!view) return;
    if (!(await verifiedSuperiorMark(jwt, type, view.superior, deps))) return;
    await view.learn({ marks: { [type]: jwt } }).catch((error: unknown) => log('storing the superior\'s trust mark failed', error));
  }

  return async () => {
    const parent = parentEntityId(deps);
    if (!parent) return [];
    const nowMs = deps.clock.now().getTime();
    if (due(nowMs) && nowMs >= retryAt) {
      inFlight ??= refresh(parent).finally(() => {
        inFlight = undefined;
      });
      await inFlight;
    }
    const now = deps.clock.now().getTime();
    return [...held.values()].filter((mark) => mark.exp * 1000 > now).map((mark) => mark.entry);
  };
}

/**
 * The times of a mark the parent answered, when it is the mark asked for, about this very registry;
 * else undefined (not kept). Decoded only, for the configuration (whose readers verify it); the superior
 * view keeps a mark only once it verifies.
 */
function readMark(jwt: string, asked: { parent: string; sub: string; type: string; registryId: string }): { iat: number; exp: number } | undefined {
  try {
    const claims = decodeJwt(jwt);
    if (claims.iss !== asked.parent || claims.sub !== asked.sub || claims.trust_mark_type !== asked.type || claims.ward_registry_id !== asked.registryId) return undefined;
    if (typeof claims.iat !== 'number' || typeof claims.exp !== 'number') return undefined;
    return { iat: claims.iat, exp: claims.exp };
  } catch {
    return undefined;
  }
}

/**
 * Whether `jwt` is a `type` mark the superior (`superior`, from the last validated chain) issued about
 * this registry: typed `trust-mark+jwt`, offering no key, signed by one of the superior's keys, `iss`
 * the superior, `sub` this registry's entity identifier and `ward_registry_id` this registry's id.
 */
export async function verifiedSuperiorMark(
  jwt: string,
  type: string,
  superior: SuperiorKeys | undefined,
  deps: Pick<OidfDeps, 'clock' | 'baseUrl' | 'registryId'>,
): Promise<boolean> {
  if (!superior) return false;
  const claims = (await verifiedPayload(jwt, TRUST_MARK_TYP, superior.keys, deps.clock.now())) as Partial<TrustMarkClaims> | undefined;
  return (
    typeof claims === 'object' &&
    claims !== null &&
    claims.trust_mark_type === type &&
    claims.iss === superior.entityId &&
    claims.sub === ownEntityId(deps) &&
    claims.ward_registry_id === deps.registryId
  );
}
