import type { Scope } from '../../core/call-context.ts';
import type { Config } from '../../core/config.ts';
import { ErrorEnvelope } from '../../contract/schemas/common.ts';
import { requiredScope } from '../credentials/index.ts';

type AuthMode = Config['REGISTRY_AUTH_MODE'];
type SecurityScheme =
  | { type: 'apiKey'; in: 'header'; name: string; description: string }
  | { type: 'http'; scheme: string; bearerFormat?: string; description: string };

/**
 * How a caller proves who it is, as OpenAPI 3.0.3 security schemes (docs/auth-modes.md): an API key
 * in every mode, and the token of the mode this registry runs in. mTLS has no scheme type in 3.0.3
 * (`mutualTLS` is 3.1): its certificate-bound token is described as the Bearer token it is.
 */
const TOKEN_SCHEMES: Record<Exclude<AuthMode, 'disabled'>, { name: string; scheme: SecurityScheme }> = {
  jwt: {
    name: 'bearerJwt',
    scheme: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'An access token from the configured issuer (REGISTRY_AUTH_MODE=jwt): RS256, ES256 or EdDSA; the scope claim names the scopes.' },
  },
  mtls: {
    name: 'mtlsBoundJwt',
    scheme: {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
      description: 'REGISTRY_AUTH_MODE=mtls: over TLS with a client certificate chained to the configured CA, an access token bound to that certificate (cnf.x5t#S256, RFC 8705).',
    },
  },
  dpop: {
    name: 'dpop',
    scheme: { type: 'http', scheme: 'DPoP', description: 'REGISTRY_AUTH_MODE=dpop: `Authorization: DPoP <token>` with a `DPoP` proof header for each request (RFC 9449).' },
  },
};

const API_KEY: SecurityScheme = {
  type: 'apiKey',
  in: 'header',
  name: 'X-API-Key',
  description: 'An API key (rk_…), accepted in every mode; `Authorization: Bearer rk_…` works too. Its scopes and pricing tier apply.',
};

/** The security schemes of a registry running in `mode`. */
export function securitySchemes(mode: AuthMode): Record<string, SecurityScheme> {
  return mode === 'disabled' ? { apiKey: API_KEY } : { apiKey: API_KEY, [TOKEN_SCHEMES[mode].name]: TOKEN_SCHEMES[mode].scheme };
}

type RouteSchema = Record<string, unknown> & { response?: Record<string, unknown>; description?: string };

/**
 * A route's schema as the document shows it: its security requirement and scope, read from the one
 * scope table (route-scopes.ts), and the 401 and 403 answers that follow from it. Any operation may
 * answer 401, since a credential that is presented is checked even where none is needed; 403 where a
 * scope is needed. The route's own answers for those statuses (the FHIR directory's) are kept.
 * In `disabled` mode a caller without a credential has every scope, so a credential is optional.
 */
export function withSecurity(schema: RouteSchema, method: string, url: string, mode: AuthMode): RouteSchema {
  const scope: Scope | 'public' = requiredScope(method, url);
  const schemes = Object.keys(securitySchemes(mode)).map((name) => ({ [name]: [] }));
  const optional = scope === 'public' || mode === 'disabled';
  const needs = scope === 'public' ? 'No credential is needed; one that is presented is checked.' : `Needs the ${scope} scope.`;
  return {
    ...schema,
    description: `${schema.description ?? ''} ${needs}`.trim(),
    security: optional ? [{}, ...schemes] : schemes,
    'x-required-scope': scope,
    response: { 401: ErrorEnvelope, ...(scope === 'public' ? {} : { 403: ErrorEnvelope }), ...schema.response },
  };
}
