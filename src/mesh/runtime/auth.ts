/**
 * Mesh authentication (spec: Authentication/Mesh; contract §10): an HS256 JWT in
 * `Authorization: Bearer`, `scope` holding `mesh:invoke`, an `exp` in the future, a lifetime
 * (`exp - iat`) of at most `MESH_JWT_MAX_TTL`, and `X-Agent-ID` equal to `sub`. Every failure is a
 * -32001 `MeshRpcError` with `data.reason`; the HTTP bindings send it with status 401.
 */
import { SignJWT, decodeProtectedHeader, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import type { Clock } from '../../core/clock.ts';
import { MeshRpcError } from './mesh-errors.ts';

/** The only scope the mesh knows (spec: API key scopes). */
export const MESH_SCOPE = 'mesh:invoke';

/** Tokens minted a little ahead of a caller's clock are tolerated this much (seconds). */
const IAT_SKEW_SECONDS = 60;

export type AuthFailureReason =
  | 'missing_token'
  | 'malformed_token'
  | 'alg_not_allowed'
  | 'bad_signature'
  | 'expired'
  | 'missing_claim'
  | 'issued_in_future'
  | 'lifetime_too_long'
  | 'missing_scope'
  | 'missing_agent_id'
  | 'agent_id_mismatch';

/** Who is calling, once authenticated. `sub` is the caller's DID. */
export type MeshPrincipal = {
  readonly sub: string;
  readonly scopes: readonly string[];
  readonly issuedAt: number;
  readonly expiresAt: number;
};

export type MeshAuthSettings = {
  readonly secret: string;
  /** `MESH_JWT_MAX_TTL`, seconds. */
  readonly maxTtlSeconds: number;
  readonly clock: Clock;
};

/** The two headers that carry a mesh credential. */
export type MeshCredentials = { readonly authorization?: string | undefined; readonly agentId?: string | undefined };

export type MeshAuthenticator = (credentials: MeshCredentials) => Promise<MeshPrincipal>;

function fail(reason: AuthFailureReason, detail?: string): never {
  throw new MeshRpcError('UNAUTHORIZED', undefined, detail ? { reason, detail } : { reason });
}

function reasonForJoseError(error: unknown): AuthFailureReason {
  if (error instanceof joseErrors.JWTExpired) return 'expired';
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return 'bad_signature';
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return 'alg_not_allowed';
  if (error instanceof joseErrors.JWTClaimValidationFailed) return 'missing_claim';
  return 'malformed_token';
}

function scopesOf(payload: JWTPayload): string[] {
  const scope = payload.scope;
  if (typeof scope === 'string') return scope.split(' ').filter(Boolean);
  return [];
}

/**
 * Returns a function that authenticates one request's credentials. The algorithm is pinned before
 * the signature is looked at, so `none`, RS256 or any other header is refused as `alg_not_allowed`
 * whatever the token's signature says.
 */
export function createMeshAuthenticator(settings: MeshAuthSettings): MeshAuthenticator {
  const key = new TextEncoder().encode(settings.secret);
  // Tokens already verified, by their exact text: callers reuse a token for many requests, and its
  // signature, claims and scope cannot change. Time-dependent checks still run on every request.
  const verified = new Map<string, VerifiedToken>();
  return async ({ authorization, agentId }) => {
    const match = /^Bearer[ ]+([^\s]+)\s*$/i.exec(authorization ?? '');
    if (!match?.[1]) fail('missing_token');
    const token = match[1];
    const now = settings.clock.now();
    const nowS = Math.floor(now.getTime() / 1000);
    let claims = verified.get(token);
    if (!claims) {
      claims = await verifyToken(token, key, now, settings.maxTtlSeconds);
      if (verified.size >= VERIFIED_CACHE_SIZE) verified.delete(verified.keys().next().value as string);
      verified.set(token, claims);
    }
    if (claims.exp <= nowS) {
      verified.delete(token);
      fail('expired');
    }
    if (claims.iat > nowS + IAT_SKEW_SECONDS) fail('issued_in_future');
    if (agentId === undefined || agentId === '') fail('missing_agent_id');
    if (agentId !== claims.sub) fail('agent_id_mismatch', 'X-Agent-ID must equal the token subject');
    return { sub: claims.sub, scopes: claims.scopes, issuedAt: claims.iat, expiresAt: claims.exp };
  };
}

const VERIFIED_CACHE_SIZE = 1024;

type VerifiedToken = { readonly sub: string; readonly iat: number; readonly exp: number; readonly scopes: readonly string[] };

/** The checks that depend on the token alone: algorithm, signature, claims, lifetime, scope. */
async function verifyToken(token: string, key: Uint8Array, now: Date, maxTtlSeconds: number): Promise<VerifiedToken> {
  let alg: unknown;
  try {
    alg = decodeProtectedHeader(token).alg;
  } catch {
    fail('malformed_token');
  }
  if (alg !== 'HS256') fail('alg_not_allowed', `alg ${String(alg)} is not HS256`);
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, key, { algorithms: ['HS256'], currentDate: now, requiredClaims: ['sub', 'iat', 'exp'] }));
  } catch (error) {
    fail(reasonForJoseError(error));
  }
  const { sub, iat, exp } = payload as { sub: unknown; iat: number; exp: number };
  if (typeof sub !== 'string' || sub === '') fail('missing_claim', 'sub');
  if (exp - iat > maxTtlSeconds) fail('lifetime_too_long', `exp - iat must be at most ${maxTtlSeconds} s`);
  const scopes = scopesOf(payload);
  if (!scopes.includes(MESH_SCOPE)) fail('missing_scope', `scope must contain ${MESH_SCOPE}`);
  return { sub, iat, exp, scopes };
}

export type IssueTokenOptions = {
  readonly secret: string;
  readonly sub: string;
  /** Seconds; default 300. */
  readonly ttlSeconds?: number;
  readonly scope?: string;
  readonly clock?: Clock;
};

/**
 * Mints a mesh token (`{alg: HS256, typ: JWT}`, `sub`, `iat`, `exp`, `scope`): what an agent uses to
 * call another agent, and what tests and the benchmark use as a caller.
 */
export async function issueMeshToken(options: IssueTokenOptions): Promise<string> {
  const iat = Math.floor((options.clock?.now() ?? new Date()).getTime() / 1000);
  return new SignJWT({ scope: options.scope ?? MESH_SCOPE })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(options.sub)
    .setIssuedAt(iat)
    .setExpirationTime(iat + (options.ttlSeconds ?? 300))
    .sign(new TextEncoder().encode(options.secret));
}
