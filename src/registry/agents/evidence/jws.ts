// Compact JWS primitives shared by signatures and attestations. Structure and alg are checked here,
// before any key is touched, so a forbidden alg is reported as such rather than as a failed verification.
import { Buffer } from 'node:buffer';
import type { KeyObject } from 'node:crypto';
import { compactVerify } from 'jose';
import {
  ALLOWED_JWS_ALGS,
  CLOCK_SKEW_SECONDS,
  isJsonObject,
  isOversized,
  type AllowedJwsAlg,
  type ElementProblem,
  type TrustBinding,
  type TrustValidationErrorCode,
} from './trust-types.ts';

/** A structurally sound compact JWS with an allowed alg and a JSON-object payload (not yet verified). */
export type ParsedJws = {
  token: string;
  alg: AllowedJwsAlg;
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
};

/** Outcome of {@link parseCompactJws}; `alg` failures are kept apart from other malformations. */
export type JwsParseOutcome =
  { ok: true; jws: ParsedJws } | { ok: false; problem: 'malformed' | 'alg'; message: string };

const BASE64URL = /^[A-Za-z0-9_-]*$/;
const ALLOWED: ReadonlySet<string> = new Set(ALLOWED_JWS_ALGS);

function decodeJsonSegment(segment: string): unknown {
  // A length of 4n+1 cannot come from base64url encoding; Buffer would silently drop the tail.
  if (segment.length === 0 || segment.length % 4 === 1 || !BASE64URL.test(segment)) return undefined;
  try {
    return JSON.parse(Buffer.from(segment, 'base64url').toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** Parses a JWS Compact Serialization without verifying it. */
export function parseCompactJws(token: string): JwsParseOutcome {
  const segments = token.split('.');
  if (segments.length !== 3) {
    return {
      ok: false,
      problem: 'malformed',
      message: 'Not a JWS in compact serialization (three dot-separated parts).',
    };
  }
  const [headerSegment = '', payloadSegment = '', signatureSegment = ''] = segments;
  const header = decodeJsonSegment(headerSegment);
  if (!isJsonObject(header)) {
    return { ok: false, problem: 'malformed', message: 'The JWS header is not a base64url JSON object.' };
  }
  const alg = header['alg'];
  if (typeof alg !== 'string') {
    return { ok: false, problem: 'malformed', message: 'The JWS header has no "alg".' };
  }
  if (!ALLOWED.has(alg)) {
    // The alg value is attacker-chosen text, so it is not echoed back.
    return {
      ok: false,
      problem: 'alg',
      message: `The JWS alg is not allowed; use one of ${ALLOWED_JWS_ALGS.join(', ')}.`,
    };
  }
  // No critical extension is understood here, and an unencoded (b64=false) payload is not JSON.
  if (header['crit'] !== undefined || (header['b64'] !== undefined && header['b64'] !== true)) {
    return {
      ok: false,
      problem: 'malformed',
      message: 'Critical header extensions and unencoded payloads are not supported.',
    };
  }
  if (
    signatureSegment.length === 0 ||
    !BASE64URL.test(signatureSegment) ||
    signatureSegment.length % 4 === 1
  ) {
    return {
      ok: false,
      problem: 'malformed',
      message: 'The JWS signature part is missing or not base64url.',
    };
  }
  const payload = decodeJsonSegment(payloadSegment);
  if (!isJsonObject(payload)) {
    return { ok: false, problem: 'malformed', message: 'The JWS payload is not a base64url JSON object.' };
  }
  for (const claim of ['exp', 'nbf', 'iat'] as const) {
    if (
      payload[claim] !== undefined &&
      !(typeof payload[claim] === 'number' && Number.isFinite(payload[claim]))
    ) {
      return { ok: false, problem: 'malformed', message: `The "${claim}" claim must be a NumericDate.` };
    }
  }
  return { ok: true, jws: { token, alg: alg as AllowedJwsAlg, header, payload } };
}

/**
 * One submitted element of a JWS section parsed, or its problem: not a string of at most 16 KiB, or
 * not a sound compact JWS (`codes.malformed`), or a forbidden alg (`codes.alg`). `noun` names the
 * element in the message ("A signature").
 */
export function parseJwsElement(
  element: unknown,
  noun: string,
  codes: { malformed: TrustValidationErrorCode; alg: TrustValidationErrorCode },
): { jws: ParsedJws } | { problem: ElementProblem } {
  if (typeof element !== 'string' || isOversized(element)) {
    return { problem: { code: codes.malformed, message: `${noun} must be a string of at most 16 KiB.` } };
  }
  const parsed = parseCompactJws(element);
  if (!parsed.ok) return { problem: { code: parsed.problem === 'alg' ? codes.alg : codes.malformed, message: parsed.message } };
  return { jws: parsed.jws };
}

/** True when any candidate key verifies the JWS. Keys are tried in order; each failure just moves on. */
export async function verifyWithAnyKey(jws: ParsedJws, candidates: readonly KeyObject[]): Promise<boolean> {
  for (const key of candidates) {
    try {
      await compactVerify(jws.token, key, { algorithms: [jws.alg] });
      return true;
    } catch {
      // Wrong key or bad signature: the next candidate may still verify.
    }
  }
  return false;
}

/** Which of `exp`/`nbf` (with {@link CLOCK_SKEW_SECONDS}) rules the payload out at `now`, if any. */
export function timeWindowProblem(
  payload: Record<string, unknown>,
  now: Date,
): 'expired' | 'not-yet-valid' | undefined {
  const nowSeconds = now.getTime() / 1000;
  const exp = payload['exp'];
  const nbf = payload['nbf'];
  if (typeof exp === 'number' && nowSeconds >= exp + CLOCK_SKEW_SECONDS) return 'expired';
  if (typeof nbf === 'number' && nowSeconds < nbf - CLOCK_SKEW_SECONDS) return 'not-yet-valid';
  return undefined;
}

/**
 * Names of the binding claims in `payload` that disagree with the record. `sub` is compared with the
 * agent id and `org_id` with the owner only once those are known; the other two are always compared.
 */
export function bindingMismatches(payload: Record<string, unknown>, binding: TrustBinding): string[] {
  const expected: Array<[claim: string, value: string | undefined]> = [
    ['sub', binding.agent_id],
    ['display_name', binding.display_name],
    ['jurisdiction', binding.jurisdiction],
    ['org_id', binding.org_id],
  ];
  return expected
    .filter(
      ([claim, value]) => value !== undefined && payload[claim] !== undefined && payload[claim] !== value,
    )
    .map(([claim]) => claim);
}

/** How an element's claim problems are worded: its name, the participle of its claims, its codes. */
export type ClaimsWording = {
  noun: 'attestation' | 'signature';
  participle: 'attested' | 'signed';
  mismatch: TrustValidationErrorCode;
  outsideWindow: TrustValidationErrorCode;
};

/**
 * What a verified payload's claims rule out, if anything: a binding claim that disagrees with the
 * record ({@link bindingMismatches}), then `exp`/`nbf` at `now` ({@link timeWindowProblem}).
 */
export function claimsProblem(
  payload: Record<string, unknown>,
  binding: TrustBinding,
  now: Date,
  wording: ClaimsWording,
): ElementProblem | undefined {
  const mismatched = bindingMismatches(payload, binding);
  if (mismatched.length > 0) {
    return { code: wording.mismatch, message: `The ${wording.participle} ${mismatched.join(', ')} does not match this record.` };
  }
  const window = timeWindowProblem(payload, now);
  if (window !== undefined) {
    return {
      code: wording.outsideWindow,
      message: window === 'expired' ? `The ${wording.noun} has expired (exp).` : `The ${wording.noun} is not valid yet (nbf).`,
    };
  }
  return undefined;
}

/** Header members that offer a key; none of them is ever used as a source of trust. */
export const HEADER_KEY_MEMBERS = ['jku', 'x5u', 'jwk', 'x5c'] as const;

/** True when the header offers a key of its own. */
export function headerOffersKey(header: Record<string, unknown>): boolean {
  return HEADER_KEY_MEMBERS.some((member) => header[member] !== undefined);
}
