/**
 * The trust chain of a registry at the top of its federation (docs/federation.md, "One chain"): its own
 * entity configuration alone, the chain OIDF §4 gives a trust anchor. Carried in the bundles it
 * issues, it lets a verifier holding the anchor's keys judge the marks in them as it does below the
 * root: the issuer's entity identifier, `trust_mark_issuers` and the status endpoint are read from it.
 * Signed again once a minute, and at once after a rotation: routing advice asks on every answer, and a
 * configuration reads the active children for `trust_mark_issuers`.
 */
import { decodeJwt } from 'jose';
import { signEntityConfiguration } from './entity-configuration.ts';
import type { OidfDeps } from './oidf-deps.ts';

const RESIGN_MS = 60_000;
const RETRY_MS = 10_000;

type AnchorDeps = Pick<OidfDeps, 'config' | 'clock' | 'signer' | 'registryId' | 'baseUrl' | 'heldTrustMarks' | 'activeChildren'>;

/** Returns a function answering `[the configuration]` now; it never throws (undefined while it cannot sign). */
export function createAnchorTrustChain(deps: AnchorDeps, log: (message: string, error?: unknown) => void = () => {}): () => Promise<string[] | undefined> {
  let held: { chain: string[]; signedAt: number; kid: string; exp: number } | undefined;
  let inFlight: Promise<void> | undefined;
  /** After a failed signing (or one already expired: the key lapsed, renewal failing), none before this. */
  let retryAt = 0;

  async function sign(): Promise<void> {
    try {
      const configuration = await signEntityConfiguration(deps);
      const signedAt = deps.clock.now().getTime();
      held = { chain: [configuration], signedAt, kid: deps.signer.kid, exp: (decodeJwt(configuration).exp as number) * 1000 };
      // A configuration expires with its key: one born expired would be signed again on every request.
      if (held.exp <= signedAt) retryAt = signedAt + RETRY_MS;
    } catch (error) {
      retryAt = deps.clock.now().getTime() + RETRY_MS;
      log('signing the entity configuration for trust bundles failed', error);
    }
  }

  const start = () =>
    (inFlight ??= sign().finally(() => {
      inFlight = undefined;
    }));

  return async () => {
    const nowMs = deps.clock.now().getTime();
    // Another key signs now, or none is held: wait for the new one. A minute-old one is still good
    // for most of its hour, so it is served while the next is signed.
    if (!held || held.kid !== deps.signer.kid || held.exp <= nowMs) {
      if (nowMs >= retryAt || held?.kid !== deps.signer.kid) await start();
    } else if (nowMs - held.signedAt >= RESIGN_MS) void start();
    return held && held.exp > deps.clock.now().getTime() ? held.chain : undefined;
  };
}
