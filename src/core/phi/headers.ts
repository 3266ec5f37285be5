import type { PhiDetectorName } from './detectors.ts';
import { scanTextForPhi } from './scan.ts';

/**
 * Headers that are not scanned: credentials (a token's base64 would be decoded and its claims read as
 * text; they are verified, never stored or logged) and what the HTTP machinery itself sets. Every
 * other header is caller-chosen text that may be echoed (X-Request-Id), stored (idempotency keys) or
 * logged, so it is scanned like a query parameter (issue 19: `X-Request-Id: MRN:00482913`).
 */
const UNSCANNED_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'dpop',
  'x-api-key',
  'x-agent-id',
  // Signed statements that authenticate a registry or an agent: verified, never stored as sent.
  'ward-entity-configuration',
  'x-mesh-signature',
  'host',
  'connection',
  'content-length',
  'content-type',
  'accept',
  'accept-encoding',
  'accept-language',
  'transfer-encoding',
  'if-match',
  'if-none-match',
  'origin',
  'referer',
  'access-control-request-method',
  'access-control-request-headers',
  'sec-fetch-mode',
  'sec-fetch-site',
  'sec-fetch-dest',
]);

/** The caller-chosen headers holding PHI, as findings `{in: 'header', pointer: '/<name>'}`. */
export function scanHeadersForPhi(headers: Record<string, string | string[] | undefined>): Array<{ detector: PhiDetectorName; in: 'header'; pointer: string }> {
  const findings: Array<{ detector: PhiDetectorName; in: 'header'; pointer: string }> = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || UNSCANNED_HEADERS.has(name)) continue;
    for (const text of Array.isArray(value) ? value : [value]) {
      for (const finding of scanTextForPhi(text)) findings.push({ detector: finding.detector, in: 'header', pointer: `/${name}` });
    }
  }
  return findings;
}
