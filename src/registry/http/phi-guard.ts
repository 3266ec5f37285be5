import type { FastifyInstance, FastifyRequest } from 'fastify';
import { WardError } from '../../core/errors.ts';
import { scanForPhi, scanHeadersForPhi, scanQueryForPhi } from '../../core/phi/index.ts';
import { createPhiScanPool, textCharsIn } from './phi-scan-pool.ts';

/**
 * Bodies nested deeper than this are refused (after the PHI scan): the scan reads 64 levels and below
 * that only sweeps for FHIR patient resources, so without this limit other PHI could hide there. No
 * registry body needs more than a handful.
 */
export const MAX_BODY_DEPTH = 32;

/**
 * Contract §8: every request's body, query string, path parameters and headers are scanned after parsing and
 * before validation, idempotency, storage or any log line that could quote them. A hit is a 422 that
 * names the detector and where, never the value, and nothing else runs.
 */
export function registerPhiGuard(app: FastifyInstance, options: { maxTextChars: number } = { maxTextChars: 262_144 }): void {
  const pool = createPhiScanPool();
  app.addHook('onClose', async () => pool.close());
  app.addHook('preValidation', async (request) => {
    // The scan's cost is bounded per request: a body with more text than the guard reads is refused
    // before anything reads it, and a large one is scanned off the event loop (./phi-scan-pool.ts).
    const body = request.body === undefined ? undefined : scannedBody(request);
    const textChars = body === undefined ? 0 : textCharsIn(body, options.maxTextChars);
    if (textChars > options.maxTextChars) {
      throw new WardError('PAYLOAD_TOO_LARGE', `The body holds more text than the PHI guard reads per request (${options.maxTextChars} characters); it was not processed.`, {
        max_text_chars: options.maxTextChars,
      });
    }
    const bodyFindings = body === undefined ? [] : await pool.scan(body, textChars);
    // PHI first, whatever else is wrong with the request: a patient's record nested past the depth
    // limit is refused as PHI, not as a malformed body (the scan reads 64 levels and sweeps below).
    const findings = [
      ...scanQueryForPhi(freeTextQuery(request)).map((f) => ({
        detector: f.detector,
        in: 'query',
        pointer: f.pointer.replace(/^\/query/, ''),
      })),
      ...scanForPhi(request.params ?? {}).map((f) => ({ detector: f.detector, in: 'path', pointer: f.pointer })),
      ...scanHeadersForPhi(request.headers),
      ...bodyFindings.map((f) => ({ detector: f.detector, in: 'body', pointer: f.pointer })),
    ];
    if (findings.length > 0) {
      throw new WardError(
        'PHI_DETECTED',
        'The request appears to carry protected health information; it was not processed.',
        { findings },
      );
    }
    if (request.body !== undefined && exceedsDepth(request.body, MAX_BODY_DEPTH)) {
      throw new WardError('VALIDATION_ERROR', `The body is nested deeper than ${MAX_BODY_DEPTH} levels.`, {
        errors: [{ in: 'body', pointer: '', reason: `must not nest deeper than ${MAX_BODY_DEPTH} levels` }],
      });
    }
  });
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Query parameters of this route that are numbers in a string (positions such as a cursor). */
    phiNumericQuery?: readonly string[];
    /**
     * Top-level body members of this route that carry a signed token (a compact JWS) the route verifies
     * and never stores or logs, like the credential headers left unscanned: decoded, a token's numeric
     * claims (`iat`, `exp`) read as identifiers about one time in eleven. Only a value of the shape of a
     * compact JWS is left out; anything else in the member is scanned.
     */
    phiSignedBody?: readonly string[];
  }
}

/**
 * The query parameters to scan as text. A parameter the route declares numeric (an integer in its
 * schema, or listed in `config.phiNumericQuery`) and whose value is only digits is a position or a
 * size, not text: scanning it would refuse about one ten-digit value in eleven as an NHS number.
 */
function freeTextQuery(request: FastifyRequest): Record<string, unknown> {
  const query = { ...((request.query ?? {}) as Record<string, unknown>) };
  const schema = request.routeOptions.schema?.querystring as { properties?: Record<string, { type?: string }> } | undefined;
  const numeric = new Set(request.routeOptions.config.phiNumericQuery ?? []);
  for (const [name, property] of Object.entries(schema?.properties ?? {})) {
    if (property.type === 'integer' || property.type === 'number') numeric.add(name);
  }
  for (const name of numeric) {
    const value = query[name];
    if (typeof value === 'string' && /^\d{1,20}$/.test(value)) delete query[name];
  }
  return query;
}

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** The body to scan: without the members the route declares signed (`phiSignedBody`) that hold a compact JWS. */
function scannedBody(request: FastifyRequest): unknown {
  const signed = request.routeOptions.config.phiSignedBody ?? [];
  const body = request.body;
  if (signed.length === 0 || typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const kept: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  for (const name of signed) if (typeof kept[name] === 'string' && COMPACT_JWS.test(kept[name])) delete kept[name];
  return kept;
}

/** Iterative, so a hostile body cannot overflow the stack. */
export function exceedsDepth(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop() as [unknown, number];
    if (typeof current !== 'object' || current === null) continue;
    if (depth >= limit) return true;
    for (const child of Object.values(current)) stack.push([child, depth + 1]);
  }
  return false;
}
