// Verifying a compact JWS against a key set the verifier already trusts (the anchor's, one taken from a
// verified statement, or a registry's published JWKS). A key verifies only inside its not_before/not_after
// window, and the JWS header is never a source of keys: statements, bundles, status tokens and the
// registry's signed answers (src/client) all go through here. In core because the registry and its
// clients both verify with it, and dependencies point inward.
import { compactVerify, decodeProtectedHeader, importJWK, type JWK } from 'jose';

/** A published public JWK; `not_before` / `not_after` (RFC 3339, `null` = open) bound when it verifies. */
export type PublishedJwk = Record<string, unknown> & { kid?: string; not_before?: string | null; not_after?: string | null };

/** Members only private or symmetric JWKs carry (RFC 7518 §6.2.2, §6.3.2, §6.4). */
const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;

export function hasPrivateKeyMaterial(jwk: Record<string, unknown>): boolean {
  return PRIVATE_JWK_MEMBERS.some((member) => member in jwk);
}

/** Algorithms a registry signs with (contract §5); `none`, HMAC and everything else are refused. */
export const FEDERATION_ALGORITHMS: readonly string[] = ['ES256', 'EdDSA', 'RS256'];
/** Clock skew tolerated on every time check of the chain. */
export const SKEW_MS = 60_000;

/** Header members that name a key or where to fetch one; their presence alone makes a JWS unacceptable. */
const KEY_OFFERING_MEMBERS = ['jku', 'x5u', 'jwk', 'x5c'] as const;

/** The protected header, or `undefined` when `token` is not a compact JWS with a JSON header. */
export function readProtectedHeader(token: unknown): Record<string, unknown> | undefined {
  if (typeof token !== 'string' || token.split('.').length !== 3) return undefined;
  try {
    return decodeProtectedHeader(token) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** The header members that offer a key (never fetched, never used). */
export function offeredKeyMembers(header: Record<string, unknown>): string[] {
  return KEY_OFFERING_MEMBERS.filter((member) => header[member] !== undefined);
}

/** Why `jwk` verifies nothing at `now`, if it does not. An unreadable bound counts as closed. */
export function keyWindowProblem(jwk: PublishedJwk, now: Date): 'expired' | 'not-yet-valid' | undefined {
  const { not_before: notBefore, not_after: notAfter } = jwk;
  if (notAfter !== undefined && notAfter !== null && !(now.getTime() <= Date.parse(notAfter) + SKEW_MS)) return 'expired';
  if (notBefore !== undefined && notBefore !== null && !(now.getTime() >= Date.parse(notBefore) - SKEW_MS)) return 'not-yet-valid';
  return undefined;
}

export type KeySetVerification =
  | { ok: true; payload: unknown }
  | { ok: false; problem: 'key-unknown' | 'key-expired' | 'key-not-yet-valid' | 'signature-invalid' | 'payload-not-json'; message: string };

/**
 * Verifies `token` (whose protected header is `header`) with the key of `keys` its `kid` names. Only
 * public keys inside their validity window at `now` take part; the `alg` must be one of
 * {@link FEDERATION_ALGORITHMS} and agree with the key's own `alg`. Returns the parsed JSON payload.
 */
export async function verifyWithKeySet(
  token: string,
  header: Record<string, unknown>,
  keys: readonly PublishedJwk[],
  now: Date,
): Promise<KeySetVerification> {
  const kid = header.kid;
  const named = typeof kid === 'string' ? keys.filter((key) => key.kid === kid && !hasPrivateKeyMaterial(key)) : [];
  if (named.length === 0) return { ok: false, problem: 'key-unknown', message: 'no trusted key has the kid it names' };
  const current = named.filter((key) => keyWindowProblem(key, now) === undefined);
  if (current.length === 0) {
    return keyWindowProblem(named[0] as PublishedJwk, now) === 'expired'
      ? { ok: false, problem: 'key-expired', message: `key ${kid as string} is past its not_after` }
      : { ok: false, problem: 'key-not-yet-valid', message: `key ${kid as string} is before its not_before` };
  }
  const alg = header.alg;
  // The alg is attacker-chosen text, so it is not echoed back.
  if (typeof alg !== 'string' || !FEDERATION_ALGORITHMS.includes(alg)) {
    return { ok: false, problem: 'signature-invalid', message: `the alg is not one of ${FEDERATION_ALGORITHMS.join(', ')}` };
  }
  for (const jwk of current) {
    if ((jwk.alg !== undefined && jwk.alg !== alg) || (jwk.use !== undefined && jwk.use !== 'sig')) continue;
    let verified: Uint8Array;
    try {
      const { not_before: _nb, not_after: _na, ...material } = jwk;
      verified = (await compactVerify(token, await importJWK(material as JWK, alg), { algorithms: [alg] })).payload;
    } catch {
      continue;
    }
    try {
      return { ok: true, payload: JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(verified)) as unknown };
    } catch {
      return { ok: false, problem: 'payload-not-json', message: 'the signed payload is not JSON' };
    }
  }
  return { ok: false, problem: 'signature-invalid', message: `the signature does not verify with key ${kid as string}` };
}

/**
 * The JSON payload of `token` when it is a compact JWS of type `typ` that offers no key of its own and
 * verifies with a key of `keys` inside its window; else undefined. For the registry's own checks of
 * what other registries send (entity configurations, grants, status tokens, federation tokens,
 * discovery answers), where only whether it holds matters.
 */
export async function verifiedPayload(token: unknown, typ: string, keys: readonly PublishedJwk[], now: Date): Promise<unknown> {
  const header = readProtectedHeader(token);
  if (!header || header.typ !== typ || offeredKeyMembers(header).length > 0) return undefined;
  const verified = await verifyWithKeySet(token as string, header, keys, now);
  return verified.ok ? verified.payload : undefined;
}
