/**
 * Checks of the registry's signed discovery and routing answers (contract §4, docs/discovery.md
 * "Signed answers"). With response signing on, the body carries `signed_response`: a compact JWS by
 * the registry's current key, typed `ward-discovery+jwt` over `{query, results, result_count, iss,
 * iat}` (and `federation` when present), or `ward-routing+jwt` over the routing advice without that
 * member. A signature holds when its `kid` names a key of the registry's published set that is inside
 * its validity window, its `alg` is one a registry signs with, it names no key of its own (`jku`,
 * `x5u`, `jwk`, `x5c`), and the signed payload is the answer received, member for member: a genuine
 * signature over something else verifies nothing about this answer. No I/O: the client, the console
 * and any caller holding the registry's keys use these as they are.
 */
import { isDeepStrictEqual } from 'node:util';
import { DISCOVERY_TYP, ROUTING_TYP } from '../core/crypto/answer-types.ts';
import { SKEW_MS, offeredKeyMembers, readProtectedHeader, verifyWithKeySet, type PublishedJwk } from '../core/crypto/key-set.ts';
import { parseAgentId } from '../core/ids.ts';

export type AnswerKind = 'discovery' | 'routing';

/** What each kind is signed as, and the members its signature covers beyond the answer itself. */
const KINDS: Record<AnswerKind, { typ: string; claims: readonly string[] }> = {
  discovery: { typ: DISCOVERY_TYP, claims: ['iss', 'iat'] },
  routing: { typ: ROUTING_TYP, claims: [] },
};

/** Who vouches for a verified answer; `iss` and `iat` (seconds) come with discovery answers only. */
export type AnswerSignature = { kid: string; alg: string; typ: string; iss?: string; iat?: number };

/** Why an answer is refused (`details.problem` of `SIGNATURE_INVALID`; docs/errors.md says what each means). */
export const SIGNATURE_PROBLEMS = [
  'not-json',
  'unsigned',
  'malformed',
  'wrong-type',
  'key-offered',
  'key-unknown',
  'key-expired',
  'key-not-yet-valid',
  'signature-invalid',
  'payload-not-json',
  'altered',
  'other-request',
  'stale',
] as const;
export type SignatureProblem = (typeof SIGNATURE_PROBLEMS)[number];

export type AnswerVerification =
  | { ok: true; signature: AnswerSignature }
  | { ok: false; problem: SignatureProblem; reason: string; kid?: string | undefined; alg?: string | undefined; typ?: string | undefined };

/**
 * Verifies the `signed_response` inside `text` (the answer's body exactly as received) against
 * `keys`, the registry's published JWKS, at `now`. Says why when it does not hold.
 */
export async function verifySignedAnswer(text: string, kind: AnswerKind, keys: readonly PublishedJwk[], now: Date): Promise<AnswerVerification> {
  const { typ, claims } = KINDS[kind];
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { ok: false, problem: 'not-json', reason: 'The answer is not JSON.' };
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { ok: false, problem: 'not-json', reason: 'The answer is not a JSON object.' };
  const { signed_response: token, ...answer } = body as Record<string, unknown>;
  if (token === undefined) {
    return {
      ok: false,
      problem: 'unsigned',
      reason: 'The registry did not sign this answer (it runs with REGISTRY_SIGN_RESPONSES=false), so nothing vouches for it beyond this connection.',
    };
  }
  const header = readProtectedHeader(token);
  if (!header) return { ok: false, problem: 'malformed', reason: 'signed_response is not a compact JWS with a readable header.' };
  const seen = { kid: stringOrUndefined(header.kid), alg: stringOrUndefined(header.alg), typ: stringOrUndefined(header.typ) };
  if (header.typ !== typ) {
    return { ...seen, ok: false, problem: 'wrong-type', reason: `The JWS is typed ${String(header.typ ?? 'nothing')}, not ${typ}: it is not a signature over this kind of answer.` };
  }
  const offered = offeredKeyMembers(header);
  if (offered.length > 0) {
    return { ...seen, ok: false, problem: 'key-offered', reason: `The JWS names a key of its own (${offered.join(', ')}); a key offered by the signature itself is never trusted.` };
  }
  const verified = await verifyWithKeySet(token as string, header, keys, now);
  if (!verified.ok) {
    return { ...seen, ok: false, problem: verified.problem, reason: `The signature does not verify against the registry's published keys: ${verified.message}.` };
  }
  const payload = (typeof verified.payload === 'object' && verified.payload !== null ? verified.payload : {}) as Record<string, unknown>;
  const signed = Object.fromEntries(Object.entries(payload).filter(([name]) => !claims.includes(name)));
  if (!isDeepStrictEqual(signed, answer)) {
    return { ...seen, ok: false, problem: 'altered', reason: 'The signature is genuine but covers a different answer from the one received: the answer was changed after it was signed.' };
  }
  const signature: AnswerSignature = { kid: seen.kid as string, alg: seen.alg as string, typ };
  if (typeof payload.iss === 'string') signature.iss = payload.iss;
  if (typeof payload.iat === 'number') signature.iat = payload.iat;
  return { ok: true, signature };
}

/** What the caller asked, for {@link answerFitsRequest}. */
export type AskedFor = { capability?: string | undefined; target?: string | undefined };

/**
 * Whether a verified answer is an answer to this request and still current: a signed discovery answer
 * must be for the capability asked and no older than `maxAgeSeconds` (by its `iat`; a registry serves
 * a cached answer for 30 s at most); routing advice asked for a target must name that agent, and the
 * trust bundle it embeds (valid for an hour) must not have expired. Otherwise a genuine answer to
 * another question, or an old one replayed, would pass. 60 s of clock skew either way.
 */
export function answerFitsRequest(
  kind: AnswerKind,
  body: Record<string, unknown>,
  signature: AnswerSignature,
  asked: AskedFor,
  now: Date,
  maxAgeSeconds: number,
): { problem: 'other-request' | 'stale'; reason: string } | undefined {
  if (kind === 'discovery') {
    const query = body.query as { capability?: unknown } | undefined;
    if (asked.capability !== undefined && query?.capability !== asked.capability) {
      return { problem: 'other-request', reason: `The signed answer is for the capability ${JSON.stringify(query?.capability)}, not ${JSON.stringify(asked.capability)}.` };
    }
    const iat = signature.iat;
    if (iat === undefined || !(iat * 1000 >= now.getTime() - maxAgeSeconds * 1000 - SKEW_MS && iat * 1000 <= now.getTime() + SKEW_MS)) {
      return { problem: 'stale', reason: `The signed answer was made at ${iat === undefined ? 'no stated time' : new Date(iat * 1000).toISOString()}, outside the last ${maxAgeSeconds} s.` };
    }
    return undefined;
  }
  if (asked.target !== undefined) {
    const resolved = typeof body.resolved_target === 'string' ? parseAgentId(body.resolved_target) : undefined;
    const target = parseAgentId(asked.target);
    if (!resolved || resolved.ulid !== target?.ulid) {
      return { problem: 'other-request', reason: `The signed advice is for ${String(body.resolved_target)}, not the agent asked for.` };
    }
  }
  const expiresAt = Date.parse(String((body.trust_bundle as { expires_at?: unknown } | undefined)?.expires_at));
  if (!(expiresAt + SKEW_MS > now.getTime())) {
    return { problem: 'stale', reason: 'The trust bundle inside the signed advice has expired: the advice is old.' };
  }
  return undefined;
}

function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
