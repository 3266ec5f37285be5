import type { FastifyInstance, FastifyRequest } from 'fastify';
import { authChallenge } from '../../core/http/auth-challenge.ts';
import { ANONYMOUS, SCOPES, type Caller, type Scope } from '../../core/call-context.ts';
import type { Config } from '../../core/config.ts';
import { WardError } from '../../core/errors.ts';
import type { ApiKeyService } from './api-key-service.ts';
import { presentedCredential, type PresentedCredential } from './credentials.ts';
import { requiredScope } from './route-scopes.ts';

export type { Caller };

/** Verifies the token credentials of `jwt`, `mtls` and `dpop` modes; absent in `disabled` mode. */
export type TokenAuthenticator = (credential: PresentedCredential, request: FastifyRequest) => Promise<Caller>;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope this route needs, or `public`; set for every route at registration. */
    scope?: Scope | 'public';
  }
}

const EVERY_SCOPE: ReadonlySet<Scope> = new Set(SCOPES);
const NO_SCOPE: ReadonlySet<Scope> = new Set();
const READ_ONLY: ReadonlySet<Scope> = new Set(['registry:read']);

/**
 * Authentication and scopes for every route (contract §7). Runs first (onRequest), so an
 * unauthenticated or under-scoped request is refused before its body is even read.
 * - A presented API key is always verified, whatever the mode, and the caller acts as that key.
 * - `disabled`: a caller without a credential acts with every scope (the development default).
 * - other modes: a token is verified by the mode's authenticator; no credential on a non-public route is 401.
 */
export function registerAuthentication(
  app: FastifyInstance,
  deps: {
    config: Config;
    apiKeys: ApiKeyService;
    tokens?: TokenAuthenticator;
    /** The parent registry's federation tokens (docs/federation.md): the issuer's URI, or undefined. */
    federation?: { isToken(token: string): boolean; verify(token: string): Promise<string | undefined> };
  },
): void {
  app.decorateRequest('caller', null as never);
  app.addHook('onRoute', (route) => {
    const method = [route.method].flat()[0] as string;
    route.config = { ...(route.config ?? {}), scope: requiredScope(method === 'HEAD' ? 'GET' : method, route.url) };
  });

  const unauthorized = (message: string, scheme: 'Bearer' | 'DPoP' = 'Bearer', error = 'invalid_token') => {
    const failure = new WardError('UNAUTHORIZED', message);
    failure.headers = { 'www-authenticate': authChallenge({ scheme, realm: 'ward', error, description: message.replaceAll('"', "'") }) };
    return failure;
  };

  app.addHook('onRequest', async (request) => {
    const scope = request.routeOptions.config.scope ?? 'public';
    const credential = presentedCredential(request.headers);
    request.caller = await identify(credential, request, scope);
    if (scope !== 'public' && !request.caller.scopes.has(scope)) {
      throw new WardError('INSUFFICIENT_SCOPE', `This operation needs the ${scope} scope.`, { required_scope: scope });
    }
  });

  async function identify(credential: PresentedCredential, request: FastifyRequest, scope: Scope | 'public'): Promise<Caller> {
    switch (credential.kind) {
      case 'api_key': {
        const key = await deps.apiKeys.authenticate(credential.rawKey, request.server.ward.clock.now());
        if (!key) throw unauthorized('The API key is unknown, revoked or expired.');
        return {
          principal: { kind: 'api_key', credentialId: key.row.key_id, orgId: key.row.org_id },
          scopes: new Set(key.row.scopes as Scope[]),
          pricingTier: { name: key.tier, limits: key.limits },
        };
      }
      case 'malformed':
        throw unauthorized('The Authorization header is malformed.', credential.scheme, 'invalid_request');
      case 'bearer':
        // A parent registry asking on behalf of federated discovery: read-only, whatever the mode.
        if (deps.federation?.isToken(credential.token)) {
          const issuer = await deps.federation.verify(credential.token);
          if (!issuer) throw unauthorized('The federation token is invalid, expired or not from this registry\'s parent.');
          return { principal: { kind: 'registry', credentialId: issuer }, scopes: READ_ONLY };
        }
        if (!deps.tokens) throw unauthorized(`REGISTRY_AUTH_MODE=${deps.config.REGISTRY_AUTH_MODE} accepts no tokens; use an API key.`);
        return deps.tokens(credential, request);
      case 'dpop':
        if (!deps.tokens) throw unauthorized(`REGISTRY_AUTH_MODE=${deps.config.REGISTRY_AUTH_MODE} accepts no tokens; use an API key.`);
        return deps.tokens(credential, request);
      case 'none':
        if (deps.config.REGISTRY_AUTH_MODE === 'disabled') return { principal: ANONYMOUS, scopes: EVERY_SCOPE };
        if (scope === 'public') return { principal: ANONYMOUS, scopes: NO_SCOPE };
        throw unauthorized('A credential is required.', deps.config.REGISTRY_AUTH_MODE === 'dpop' ? 'DPoP' : 'Bearer', 'invalid_request');
    }
  }
}
