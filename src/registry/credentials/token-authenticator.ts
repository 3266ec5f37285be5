import type { FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { TLSSocket } from 'node:tls';
import { SCOPES, type Scope } from '../../core/call-context.ts';
import { publicBaseUrl, type Config } from '../../core/config.ts';
import { WardError } from '../../core/errors.ts';
import { isOrgId } from '../../core/ids.ts';
import { AuthFailure, wwwAuthenticate, type AuthScheme } from './auth-failure.ts';
import type { Caller, TokenAuthenticator } from './authentication.ts';
import type { PresentedCredential } from './credentials.ts';
import { assertDpopBound, createDpopNonces, createDpopVerifier } from './dpop.ts';
import { assertNotSenderConstrained, createJwtVerifier } from './jwt-bearer.ts';
import { assertCertificateBound } from './mtls.ts';
import { createMemoryReplayCache, createRedisReplayCache } from './replay-cache.ts';

/**
 * The token side of `REGISTRY_AUTH_MODE` (contract §7), built once per app:
 * - `jwt`: a Bearer JWT verified against the JWKS, and not sender-constrained;
 * - `mtls`: a Bearer JWT whose `cnf.x5t#S256` is the thumbprint of the TLS client certificate the
 *   connection presented (the handshake already required one chained to the configured CA);
 * - `dpop`: `Authorization: DPoP <jwt>` with a `DPoP` proof for this method and URL, bound by
 *   `cnf.jkt`, each proof usable once across instances (Redis when REDIS_URL is set).
 */
export function createTokenAuthenticator(config: Config, options: { redis?: Redis } = {}): TokenAuthenticator | undefined {
  const mode = config.REGISTRY_AUTH_MODE;
  if (mode === 'disabled') return undefined;
  const jwt = createJwtVerifier({
    jwksUri: config.REGISTRY_JWT_JWKS_URI as string,
    issuer: config.REGISTRY_JWT_ISSUER as string,
    audience: config.REGISTRY_JWT_AUDIENCE as string,
    scheme: mode === 'dpop' ? 'DPoP' : 'Bearer',
  });
  const dpop =
    mode === 'dpop'
      ? createDpopVerifier({
          replayCache: options.redis ? createRedisReplayCache(options.redis) : createMemoryReplayCache(),
          ...(config.REGISTRY_DPOP_NONCES ? { nonces: createDpopNonces(config.MESH_JWT_SECRET) } : {}),
        })
      : undefined;

  async function verify(credential: PresentedCredential, request: FastifyRequest): Promise<Caller> {
    if (mode === 'dpop') {
      if (credential.kind !== 'dpop') throw new AuthFailure('scheme_mismatch', 'This registry accepts DPoP-bound tokens only.', 'DPoP');
      if (!credential.proof) throw new AuthFailure('invalid_request', 'The DPoP proof header is missing.', 'DPoP');
      const token = await jwt.verify(credential.token);
      // The URL the client signed is the public one, whatever Host header a proxy passes on.
      const url = `${publicBaseUrl(config, listeningPort(request))}${request.url}`;
      const { jkt } = await (dpop as NonNullable<typeof dpop>).verify({ proof: credential.proof, method: request.method, url, accessToken: credential.token });
      assertDpopBound(token.claims, jkt);
      return caller('dpop', token.subject, token.scopes, token.claims, 'DPoP');
    }
    if (credential.kind !== 'bearer') throw new AuthFailure('scheme_mismatch', 'This registry accepts Bearer tokens.', 'Bearer');
    const token = await jwt.verify(credential.token);
    if (mode === 'mtls') {
      const certificate = (request.raw.socket as TLSSocket).getPeerCertificate?.();
      assertCertificateBound(token.claims, certificate?.raw);
      return caller('mtls', token.subject, token.scopes, token.claims, 'Bearer');
    }
    assertNotSenderConstrained(token.claims);
    return caller('jwt', token.subject, token.scopes, token.claims, 'Bearer');
  }

  return async (credential, request) => {
    try {
      return await verify(credential, request);
    } catch (error) {
      if (!(error instanceof AuthFailure)) throw error;
      if (error.status === 503) {
        request.log.warn({ err: error.cause ?? error }, 'credential verification unavailable');
        throw new WardError('SERVICE_UNAVAILABLE', 'Credentials cannot be verified right now.', {}, 1000);
      }
      const failure = new WardError('UNAUTHORIZED', error.message);
      failure.headers = { ...error.headers, 'www-authenticate': wwwAuthenticate(error) };
      throw failure;
    }
  };
}

/**
 * The caller a verified token speaks for. Its organisation is the `org_id` claim (docs/auth-modes.md
 * "Organisations"), held to the same rules as an API key's; a claim that is there but not a valid
 * organisation id makes the token malformed rather than organisation-less.
 */
function caller(kind: 'jwt' | 'mtls' | 'dpop', subject: string, scopes: readonly string[], claims: Record<string, unknown>, scheme: AuthScheme): Caller {
  const known = scopes.filter((scope): scope is Scope => (SCOPES as readonly string[]).includes(scope));
  const orgId = claims.org_id;
  if (orgId !== undefined && !isOrgId(orgId)) {
    throw new AuthFailure('malformed', 'The access token org_id claim must be an organisation id.', scheme);
  }
  return {
    principal: { kind, credentialId: `${kind}:${subject}`, ...(orgId !== undefined ? { orgId } : {}) },
    scopes: new Set(known),
  };
}

function listeningPort(request: FastifyRequest): number | undefined {
  const address = request.server.server.address();
  return address && typeof address === 'object' ? address.port : undefined;
}
