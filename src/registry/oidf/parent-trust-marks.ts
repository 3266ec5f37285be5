/**
 * The trust marks a child registry's parent issues about it (the `registry` marks of
 * ../../contract/oidf-trust-marks.ts), kept for the child's entity configuration (OIDF §3.1.1, §7: the
 * subject carries its marks). Each is fetched from the parent's trust mark endpoint (OIDF §8.6) when
 * the configuration is asked for and the mark held is missing or a third through its life, at most
 * once per {@link RETRY_MS} while the parent fails; a mark the parent no longer issues (`not_found`:
 * the child was revoked) is dropped at once, and one that expires is never served. The last mark
 * received stays in the superior view (./superior-view.ts), to ask its status.
 */
import { WARD_TRUST_MARKS, trustMarkEntry, type TrustMarkEntry } from '../../contract/oidf-trust-marks.ts';
import { fetchTrustMark } from '../../client/openid-federation-client.ts';
import { decodeJwt } from 'jose';
import { ownEntityId, parentEntityId } from './entity-configuration.ts';
import type { OidfDeps } from './oidf-deps.ts';

/** How long after a failed fetch the parent is asked again. */
const RETRY_MS = 10_000;

type Held = { entry: TrustMarkEntry; iat: number; exp: number };

/** The marks held about this registry now, refreshed from the parent as needed; never throws. */
export function createHeldTrustMarks(deps: Pick<OidfDeps, 'config' | 'clock' | 'baseUrl' | 'fetch' | 'superiorView'>): () => Promise<TrustMarkEntry[]> {
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
        const claims = readMark(answer.jwt, parent, sub, type);
        if (claims) {
          held.set(type, { entry: trustMarkEntry(type, answer.jwt), ...claims });
          // Kept after the parent stops issuing it: its status is how a revocation is confirmed.
          deps.superiorView?.marks.set(type, answer.jwt);
        } else failed = true;
      } else if (answer.status === 404) held.delete(type);
      else failed = true;
    }
    retryAt = failed ? deps.clock.now().getTime() + RETRY_MS : 0;
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

/** The times of a mark the parent answered, when it is the mark asked for; else undefined (not kept). */
function readMark(jwt: string, parent: string, sub: string, type: string): { iat: number; exp: number } | undefined {
  try {
    const claims = decodeJwt(jwt);
    if (claims.iss !== parent || claims.sub !== sub || claims.trust_mark_type !== type) return undefined;
    if (typeof claims.iat !== 'number' || typeof claims.exp !== 'number') return undefined;
    return { iat: claims.iat, exp: claims.exp };
  } catch {
    return undefined;
  }
}
