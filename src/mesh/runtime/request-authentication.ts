/**
 * The mesh's check of one HTTP request (contract §10), shared by the gateway, the agent runtime and
 * the routes an agent adds (the avatar's speech): the bearer token and `X-Agent-ID` (auth.ts), then,
 * with DID_VERIFY, the detached signature over the body (did/body-signature.ts). It reads headers,
 * not a Fastify request; every failure is the authenticator's -32001 `MeshRpcError`.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Clock } from '../../core/clock.ts';
import { firstHeader } from '../../core/http/http-kit.ts';
import type { MeshConfig } from '../mesh-config.ts';
import { createMeshAuthenticator, type MeshPrincipal } from './auth.ts';
import { SIGNATURE_HEADER, verifyBodySignature } from './did/body-signature.ts';
import { createDidWebResolver, type DidResolver } from './did/did-web.ts';

/** Authenticates a request's headers; `body`, when given, is what DID_VERIFY checks the signature of. */
export type MeshRequestAuthenticator = (headers: IncomingHttpHeaders, body?: Buffer) => Promise<MeshPrincipal>;

export type MeshRequestAuthSettings = Pick<MeshConfig, 'MESH_JWT_SECRET' | 'MESH_JWT_MAX_TTL' | 'DID_VERIFY' | 'DID_WEB_DIR'>;

/** The request check for `config`; DIDs resolve through `didResolver` (default did:web over DID_WEB_DIR or HTTPS). */
export function createMeshRequestAuthenticator(config: MeshRequestAuthSettings, clock: Clock, didResolver?: DidResolver): MeshRequestAuthenticator {
  const authenticate = createMeshAuthenticator({ secret: config.MESH_JWT_SECRET, maxTtlSeconds: config.MESH_JWT_MAX_TTL, clock });
  const resolveDid = didResolver ?? createDidWebResolver(config.DID_WEB_DIR === undefined ? {} : { directory: config.DID_WEB_DIR });
  return async (headers, body) => {
    const principal = await authenticate({ authorization: firstHeader(headers, 'authorization'), agentId: firstHeader(headers, 'x-agent-id') });
    if (config.DID_VERIFY && body) await verifyBodySignature(body, firstHeader(headers, SIGNATURE_HEADER), principal.sub, resolveDid);
    return principal;
  };
}
