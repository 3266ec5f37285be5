/**
 * Registry-to-registry credentials for federated discovery (docs/federation.md): a parent asks its
 * children with a 60-second token it signs itself, audience the child. A child accepts one only from
 * its parent, checked with the keys its trust chain states for that parent (../oidf/federation-token-issuer.ts); the
 * token carries `registry:read` and nothing else.
 */
import { decodeProtectedHeader } from 'jose';
import type { RegistrySigner } from '../signing-keys/index.ts';
import { verifiedPayload, type PublishedJwk } from '../../core/crypto/key-set.ts';

/** The registry whose tokens are accepted, and the keys they are checked with. */
export type TokenIssuer = { id: string; jwks: { keys: PublishedJwk[] } };

export const FEDERATION_TOKEN_TYP = 'ward-federation+jwt';
const LIFETIME_S = 60;
const SKEW_S = 60;

export function issueFederationToken(signer: RegistrySigner, claims: { iss: string; aud: string; now: Date }): Promise<string> {
  const iat = Math.floor(claims.now.getTime() / 1000);
  return signer.sign({ iss: claims.iss, aud: claims.aud, iat, exp: iat + LIFETIME_S, scope: 'registry:read' }, FEDERATION_TOKEN_TYP);
}

/** Whether a bearer token says it is a federation token (its signature is checked separately). */
export function isFederationToken(token: string): boolean {
  try {
    return decodeProtectedHeader(token).typ === FEDERATION_TOKEN_TYP;
  } catch {
    return false;
  }
}

/** The issuing registry's URI when the token is valid for `audience` from `parent`; else undefined. */
export async function verifyFederationToken(
  token: string,
  parent: TokenIssuer | undefined,
  audience: string,
  now: Date,
): Promise<string | undefined> {
  if (!parent) return undefined;
  const claims = (await verifiedPayload(token, FEDERATION_TOKEN_TYP, parent.jwks.keys, now)) as { iss?: unknown; aud?: unknown; exp?: unknown; iat?: unknown } | undefined;
  if (typeof claims !== 'object' || claims === null) return undefined;
  const nowS = now.getTime() / 1000;
  if (claims.iss !== parent.id || claims.aud !== audience) return undefined;
  if (typeof claims.exp !== 'number' || claims.exp + SKEW_S < nowS) return undefined;
  if (typeof claims.iat !== 'number' || claims.iat - SKEW_S > nowS) return undefined;
  return parent.id;
}
