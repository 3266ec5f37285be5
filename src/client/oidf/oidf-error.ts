import { OIDF_ERROR_STATUS, type OidfErrorBody, type OidfErrorCode } from '../../contract/openid-federation.ts';

/**
 * A refusal of an OpenID Federation endpoint, answered in OIDF's own error format (OIDF §8.9:
 * `{error, error_description}`, `application/json`) rather than Ward's envelope: OIDF clients read that.
 */
export class OidfError extends Error {
  readonly code: OidfErrorCode;
  /** An HTTP status other than the code's own (429 for a spent budget, 401 for a refused credential). */
  readonly statusOverride: number | undefined;
  /** Seconds the client should wait (`Retry-After`), when it should. */
  readonly retryAfterS: number | undefined;

  constructor(code: OidfErrorCode, description: string, options: { status?: number; retryAfterS?: number } = {}) {
    super(description);
    this.name = 'OidfError';
    this.code = code;
    this.statusOverride = options.status;
    this.retryAfterS = options.retryAfterS;
  }

  get status(): number {
    return this.statusOverride ?? OIDF_ERROR_STATUS[this.code];
  }

  body(): OidfErrorBody {
    return { error: this.code, error_description: this.message };
  }
}
