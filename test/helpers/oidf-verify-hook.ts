/**
 * The `verifyJwtCallback` `@openid-federation/core` (0.2.1) resolves trust chains with. The library
 * fetches the entity configurations up the `authority_hints`, then each superior's subordinate
 * statement, and calls this hook for every JWS with the key it picked: an entity configuration with a
 * key from its own `jwks`, a subordinate statement with a key from its issuer's configuration. Two
 * checks of OIDF §10.2 it leaves to the hook, and this hook makes:
 * - ES[j] verifies with a key in ES[j+1]["jwks"]: the key that signed an entity's configuration must
 *   be one its superior's statement names (a key rolled over without a new statement fails);
 * - ES[i] verifies with a public key of the trust anchor, held out of band (here the root's JWKS).
 * The library asks for every configuration before any statement, so when a statement about an entity
 * is checked, the key that entity signed its configuration with is already known.
 */
import { calculateJwkThumbprint, compactVerify, importJWK, type JWK } from 'jose';

type HookInput = { jwt: string; header: Record<string, unknown>; claims: Record<string, unknown>; jwk: Record<string, unknown> };

const ALGORITHMS = ['ES256', 'EdDSA', 'RS256'];

async function thumbprint(jwk: Record<string, unknown>): Promise<string> {
  const { not_before: _nb, not_after: _na, ...material } = jwk;
  return calculateJwkThumbprint(material as JWK, 'sha256');
}

/**
 * A hook for one resolution, pinning `anchor`'s keys; `rejections` collects why it said no, `accepted`
 * the statements it said yes to (`iss → sub`). With `signatureOnly`, it checks the signature with the
 * key the library picked and nothing else: what the library does on its own.
 */
export function oidfVerifyHook(anchor: { entityId: string; jwks: { keys: Record<string, unknown>[] } }, options: { signatureOnly?: boolean } = {}) {
  const configurationKeys = new Map<string, string>();
  const rejections: string[] = [];
  const accepted: string[] = [];
  const accept = (claims: Record<string, unknown>) => {
    accepted.push(`${String(claims.iss)} → ${String(claims.sub)}`);
    return true;
  };
  const refuse = (why: string) => {
    rejections.push(why);
    return false;
  };
  const verifyJwtCallback = async ({ jwt, header, claims, jwk }: HookInput): Promise<boolean> => {
    const alg = String(header.alg);
    if (header.typ !== 'entity-statement+jwt' || !ALGORITHMS.includes(alg)) return refuse(`${String(claims.sub)}: typ or alg`);
    const { not_before: _nb, not_after: _na, ...material } = jwk;
    try {
      await compactVerify(jwt, await importJWK(material as JWK, alg), { algorithms: [alg] });
    } catch {
      return refuse(`${String(claims.sub)}: signature`);
    }
    if (options.signatureOnly) return accept(claims);
    const key = await thumbprint(jwk);
    if (claims.iss === claims.sub) {
      configurationKeys.set(String(claims.sub), key);
      if (claims.sub === anchor.entityId) {
        const pinned = await Promise.all(anchor.jwks.keys.map(thumbprint));
        if (!pinned.includes(key)) return refuse(`${anchor.entityId}: not signed by a pinned trust anchor key`);
      }
      return accept(claims);
    }
    const signedWith = configurationKeys.get(String(claims.sub));
    const named = await Promise.all((((claims.jwks as { keys?: Record<string, unknown>[] }) ?? {}).keys ?? []).map(thumbprint));
    if (!signedWith || !named.includes(signedWith)) return refuse(`${String(claims.iss)} does not name the key ${String(claims.sub)} signs with`);
    return accept(claims);
  };
  return { verifyJwtCallback, rejections, accepted };
}
