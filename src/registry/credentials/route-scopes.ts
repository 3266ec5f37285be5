import type { Scope } from '../../core/call-context.ts';

/** Routes anyone may call: discovery of the registry itself (spec: server metadata needs no auth). */
const PUBLIC = new Set([
  // The landing: links to the API document, metadata, health and the console (routes/landing.ts).
  'GET /',
  'GET /.well-known/agent-registry',
  'GET /.well-known/jwks.json',
  'GET /health',
  // Probes for load balancers and orchestrators (docs/operations.md): they say nothing secret.
  'GET /livez',
  'GET /readyz',
  // Who am I: answers for any credential, and for none (the anonymous caller).
  'GET /v1/caller',
  'GET /v1/openapi.json',
  // Federation: signed statements for children and signed status for verifiers, like OCSP (docs/federation.md).
  'GET /v1/federation/fetch',
  'GET /v1/federation/status',
  // OpenID Federation: the entity configuration and the fetch, list and resolve endpoints (signed, public by design).
  'GET /.well-known/openid-federation',
  'GET /v1/oidf/fetch',
  'GET /v1/oidf/list',
  'GET /v1/oidf/resolve',
  // Trust marks (issue, list and status): signed, about what the registry checked; the status POST changes nothing.
  'GET /v1/oidf/trust-mark',
  'GET /v1/oidf/trust-mark-list',
  'POST /v1/oidf/trust-mark-status',
  // What the FHIR directory supports: clients read it before they authenticate (docs/fhir.md).
  'GET /fhir/metadata',
]);

/**
 * The scope every route needs (contract §7): `registry:read` for reads (metadata at /v1/metadata,
 * lists, gets, discovery, routing advice, registries, trust, events, transparency), `registry:write`
 * for agent writes, `registry:admin` for registry registration, key rotation, billing and computer use.
 * A state-changing route this table does not place stops start-up: every route must be decided.
 */
export function requiredScope(method: string, url: string): Scope | 'public' {
  // CORS preflights carry no credential by design (the browser sends them on its own).
  if (PUBLIC.has(`${method} ${url}`) || method === 'OPTIONS') return 'public';
  if (url.startsWith('/v1/admin/') || url === '/metrics') return 'registry:admin';
  if (method === 'GET' || method === 'HEAD') return 'registry:read';
  if (method === 'POST' && url === '/v1/route') return 'registry:read';
  if (url === '/v1/registries' || url.startsWith('/v1/registries/') || url.startsWith('/v1/trust/keys')) return 'registry:admin';
  if ((method === 'POST' || method === 'PUT') && (url === '/v1/agents' || url.startsWith('/v1/agents/'))) return 'registry:write';
  throw new Error(`no scope decided for ${method} ${url}: add it to route-scopes.ts`);
}
