// REGISTRY_AUTH_MODE=dpop: checks a DPoP proof (RFC 9449 §4.3) and binds the access token to the proof
// key (§6.1). jose verifies the signature with the proof's own public key; the rest is checked here.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import {
  EmbeddedJWK,
  calculateJwkThumbprint,
  decodeProtectedHeader,
  errors,
  jwtVerify,
  type JWK,
} from 'jose';
import { AUTH_ALGORITHMS, AuthFailure, type AuthFailureReason } from './auth-failure.ts';
import type { ReplayCache } from './replay-cache.ts';

/** What the HTTP layer knows about the request the proof came with. */
export type DpopRequest = {
  /** The one `DPoP` header value (a request with none or several is refused before this). */
  proof: string;
  /** The request method, as received. */
  method: string;
  /** The request's absolute URL, built from the registry's configured public URL, not the Host header. */
  url: string | URL;
  /** The access token from `Authorization: DPoP <token>`. */
  accessToken: string;
};

/** Checks DPoP proofs; every refusal is an {@link AuthFailure} with scheme `DPoP`. */
export type DpopVerifier = {
  /** Resolves with the RFC 7638 SHA-256 thumbprint of the proof key, for {@link assertDpopBound}. */
  verify(request: DpopRequest): Promise<{ jkt: string }>;
};

/** Options of {@link createDpopVerifier}. */
export type DpopVerifierOptions = {
  replayCache: ReplayCache;
  now?: () => Date;
  /** How far `iat` may be from now, either way; default 60. */
  iatWindowSec?: number;
  /** Allowed proof algorithms; default ES256, EdDSA, RS256. Symmetric algorithms are never allowed. */
  algorithms?: readonly string[];
  /** Server-issued nonces (RFC 9449 §8), when required (REGISTRY_DPOP_NONCES). */
  nonces?: DpopNonces;
};

/** Server nonces: the one to hand out now, and whether one a proof carries is still fresh. */
export type DpopNonces = { current(at: Date): string; accepts(nonce: string, at: Date): boolean };

const NONCE_WINDOW_MS = 5 * 60_000;

/**
 * Stateless nonces every instance agrees on: an HMAC of the five-minute window under a key derived
 * from a secret all instances share (MESH_JWT_SECRET, with its own label so the two uses never meet).
 * A proof's nonce is accepted in its window and the next, so a client is asked for a new one at most
 * every five minutes, and a proof made more than ten minutes before its use is refused (§8's aim:
 * proofs cannot be made in advance). Nonces are not secret; they cannot be forged ahead of time.
 */
export function createDpopNonces(sharedSecret: string): DpopNonces {
  const key = createHash('sha256').update(`ward dpop nonce\u0000${sharedSecret}`).digest();
  const nonceFor = (window: number) => createHmac('sha256', key).update(String(window)).digest('base64url');
  const windowOf = (at: Date) => Math.floor(at.getTime() / NONCE_WINDOW_MS);
  const same = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
  return {
    current: (at) => nonceFor(windowOf(at)),
    accepts: (nonce, at) => same(nonce, nonceFor(windowOf(at))) || same(nonce, nonceFor(windowOf(at) - 1)),
  };
}

// Members that only a private or symmetric JWK has; a proof carrying one has leaked its own key.
const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;
const MAX_PROOF_LENGTH = 8192;
const MAX_JTI_LENGTH = 256;
// RFC 3986 §2.3 unreserved characters, which §6.2.2.2 says to decode when normalising.
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

function refuse(reason: AuthFailureReason, message: string, cause?: unknown): AuthFailure {
  return new AuthFailure(reason, message, 'DPoP', cause === undefined ? undefined : { cause });
}

/** The base64url SHA-256 of the access token: the proof's `ath` (RFC 9449 §4.2). */
export function accessTokenHash(accessToken: string): string {
  return createHash('sha256').update(accessToken).digest('base64url');
}

/**
 * An http(s) URL without query and fragment, normalised (RFC 9449 §4.3 step 9, RFC 3986 §6.2.2 and
 * §6.2.3): scheme and host lower case, default port dropped, dot segments removed, percent-encodings
 * upper case and unreserved ones decoded. Undefined when not an absolute http(s) URL.
 */
export function normaliseHtu(value: string | URL): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  url.search = '';
  url.hash = '';
  const path = url.pathname.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => {
    const char = String.fromCharCode(Number.parseInt(hex, 16));
    return UNRESERVED.test(char) ? char : `%${hex.toUpperCase()}`;
  });
  return `${url.origin}${path}`;
}

// Fixed length and free of separators whatever the client put in `jti`, so it is safe as a Redis key.
function replayKey(jkt: string, jti: string): string {
  return createHash('sha256').update(`${jkt}.${jti}`).digest('base64url');
}

function checkHeader(proof: string, algorithms: ReadonlySet<string>): void {
  let header: Record<string, unknown>;
  try {
    header = decodeProtectedHeader(proof);
  } catch {
    throw refuse('proof_invalid', 'The DPoP proof is not a well-formed JWT.');
  }
  if (typeof header['typ'] !== 'string' || header['typ'].toLowerCase() !== 'dpop+jwt') {
    throw refuse('proof_invalid', 'The DPoP proof must have typ "dpop+jwt".');
  }
  if (typeof header['alg'] !== 'string' || !algorithms.has(header['alg'])) {
    throw refuse('proof_invalid', `The DPoP proof must be signed with ${[...algorithms].join(', ')}.`);
  }
  const jwk = header['jwk'];
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) {
    throw refuse('proof_invalid', 'The DPoP proof must carry its public key in the "jwk" header.');
  }
  if (PRIVATE_JWK_MEMBERS.some((member) => member in jwk)) {
    throw refuse('proof_invalid', 'The DPoP proof "jwk" header must hold a public key only.');
  }
}

async function verifySignature(proof: string, algorithms: ReadonlySet<string>, now: Date) {
  try {
    return await jwtVerify(proof, EmbeddedJWK, {
      algorithms: [...algorithms],
      typ: 'dpop+jwt',
      requiredClaims: ['jti', 'htm', 'htu', 'iat'],
      currentDate: now,
    });
  } catch (error) {
    if (error instanceof errors.JWTExpired) throw refuse('proof_stale', 'The DPoP proof has expired.');
    if (error instanceof errors.JOSEError) {
      throw refuse(
        'proof_invalid',
        'The DPoP proof is malformed or its signature does not verify with its key.',
      );
    }
    throw error;
  }
}

/**
 * A DPoP proof verifier following RFC 9449 §4.3: `typ` is `dpop+jwt`; `alg` is an allowed asymmetric
 * algorithm; `jwk` is a public key and the signature verifies with it; `htm` equals the method; `htu`
 * equals the request URL (query and fragment ignored, normalised); `iat` is within `iatWindowSec` of
 * now either way; `ath` is the hash of the access token; `jti` was not seen before. The id is
 * remembered for twice the window, the longest a proof can stay acceptable, keyed by proof key and
 * `jti` so one client cannot burn another's ids. With `nonces`, the proof must carry a current server
 * nonce (§8): without one the answer is `use_dpop_nonce` with a `DPoP-Nonce` header to retry with.
 */
export function createDpopVerifier(options: DpopVerifierOptions): DpopVerifier {
  const iatWindowSec = options.iatWindowSec ?? 60;
  if (!(iatWindowSec > 0)) throw new Error('iatWindowSec must be positive');
  const algorithms: ReadonlySet<string> = new Set(options.algorithms ?? AUTH_ALGORITHMS);
  for (const alg of algorithms) {
    if (alg === 'none' || alg.startsWith('HS')) throw new Error(`${alg} cannot sign DPoP proofs`);
  }
  const now = options.now ?? (() => new Date());

  return {
    async verify({ proof, method, url, accessToken }) {
      if (typeof proof !== 'string' || proof.length === 0 || proof.length > MAX_PROOF_LENGTH) {
        throw refuse('proof_invalid', 'The DPoP proof is missing or too long.');
      }
      checkHeader(proof, algorithms);
      const at = now();
      const { payload, protectedHeader } = await verifySignature(proof, algorithms, at);
      const { jti, htm, htu, iat, ath } = payload as Record<string, unknown>;
      if (typeof jti !== 'string' || jti.length === 0 || jti.length > MAX_JTI_LENGTH) {
        throw refuse('proof_invalid', 'The DPoP proof "jti" must be a non-empty string.');
      }
      if (htm !== method)
        throw refuse('proof_wrong_method', 'The DPoP proof was made for another HTTP method.');
      const expectedUrl = normaliseHtu(url);
      if (expectedUrl === undefined) throw new Error('the request URL must be an absolute http(s) URL');
      if (typeof htu !== 'string' || normaliseHtu(htu) !== expectedUrl) {
        throw refuse('proof_wrong_url', 'The DPoP proof was made for another URL.');
      }
      const ageSec = at.getTime() / 1000 - (iat as number);
      if (ageSec > iatWindowSec) throw refuse('proof_stale', 'The DPoP proof was issued too long ago.');
      if (ageSec < -iatWindowSec) throw refuse('proof_stale', 'The DPoP proof is issued in the future.');
      if (typeof ath !== 'string')
        throw refuse('proof_wrong_ath', 'The DPoP proof has no access token hash ("ath").');
      if (ath !== accessTokenHash(accessToken)) {
        throw refuse('proof_wrong_ath', 'The DPoP proof was made for another access token.');
      }
      if (options.nonces) {
        const nonce = (payload as Record<string, unknown>).nonce;
        if (typeof nonce !== 'string' || !options.nonces.accepts(nonce, at)) {
          const failure = refuse('use_dpop_nonce', 'This registry requires a DPoP nonce: make a new proof with the DPoP-Nonce of this answer.');
          failure.headers = { 'dpop-nonce': options.nonces.current(at) };
          throw failure;
        }
      }
      const jkt = await calculateJwkThumbprint(protectedHeader.jwk as JWK, 'sha256');
      // Last, so that only a proof that passed every other check can take a place in the cache.
      let firstUse: boolean;
      try {
        firstUse = await options.replayCache.remember(replayKey(jkt, jti), iatWindowSec * 2);
      } catch (error) {
        throw refuse('unavailable', 'DPoP replay protection is unavailable; try again later.', error);
      }
      if (!firstUse) throw refuse('proof_replayed', 'The DPoP proof has already been used.');
      return { jkt };
    },
  };
}

/**
 * Refuses an access token not bound to the proof key (RFC 9449 §6.1): its `cnf.jkt` must equal the
 * `jkt` returned by {@link DpopVerifier.verify}. A token with no `cnf.jkt` is refused too.
 */
export function assertDpopBound(claims: Record<string, unknown>, jkt: string): void {
  const cnf = claims['cnf'];
  const bound = typeof cnf === 'object' && cnf !== null ? (cnf as Record<string, unknown>)['jkt'] : undefined;
  if (typeof bound !== 'string') {
    throw refuse('binding_mismatch', 'The access token is not bound to a DPoP key (cnf.jkt).');
  }
  if (bound !== jkt) throw refuse('binding_mismatch', 'The access token is bound to a different DPoP key.');
}
