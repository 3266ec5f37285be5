/**
 * The OpenID Federation endpoints answer every refusal in OIDF's error format (OIDF §8.9,
 * `{error, error_description}`, `application/json`), those decided before the route too (issue 41,
 * finding 5): a malformed stray `Authorization` (401 `invalid_client`), the federation rate limit
 * (429 `temporarily_unavailable`, `Retry-After` kept), the PHI guard, a body too large. The decision
 * is the registry's one error handling (http/error-handler.ts); only the rendering is OIDF's, with
 * the Ward code named in the description.
 */
import type { FastifyReply } from 'fastify';
import { OIDF_ERROR_STATUS, type OidfErrorCode } from '../../../contract/openid-federation.ts';
import { ERROR_CODES, type ErrorCode } from '../../../core/errors.ts';
import type { ErrorRenderer } from '../../../core/http/error-renderer.ts';

function oidfCodeFor(status: number): OidfErrorCode {
  if (status === 401 || status === 403) return 'invalid_client';
  if (status === 404) return 'not_found';
  if (status === 429 || status === 503) return 'temporarily_unavailable';
  if (status >= 500) return 'server_error';
  return 'invalid_request';
}

/**
 * An {@link ErrorRenderer} in OIDF's format. The status is OIDF's for `invalid_request` (400, §8.9:
 * a validation error, the PHI guard, a body too large); otherwise the Ward code's own, so a rate
 * limit stays 429 with its `Retry-After` and a 401 or 404 keeps its meaning.
 */
export const sendOidfRefusal: ErrorRenderer = (reply: FastifyReply, code: ErrorCode, message: string | undefined) => {
  reply.errorCode = code;
  const wardStatus = ERROR_CODES[code].status;
  const oidfCode = oidfCodeFor(wardStatus);
  const status = oidfCode === 'invalid_request' ? OIDF_ERROR_STATUS.invalid_request : wardStatus;
  // A 5xx says nothing of what went wrong inside, as the envelope does not.
  const text = wardStatus >= 500 && wardStatus !== 503 ? ERROR_CODES[code].title : (message ?? ERROR_CODES[code].title);
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .type('application/json')
    .send(JSON.stringify({ error: oidfCode, error_description: `${text} (${code})` }));
};
