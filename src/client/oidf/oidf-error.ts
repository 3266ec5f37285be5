import { OIDF_ERROR_STATUS, type OidfErrorBody, type OidfErrorCode } from '../../contract/openid-federation.ts';

/**
 * A refusal of an OpenID Federation endpoint, answered in OIDF's own error format (OIDF §8.9:
 * `{error, error_description}`, `application/json`) rather than Ward's envelope: OIDF clients read that.
 */
export class OidfError extends Error {
  readonly code: OidfErrorCode;

  constructor(code: OidfErrorCode, description: string) {
    super(description);
    this.name = 'OidfError';
    this.code = code;
  }

  get status(): number {
    return OIDF_ERROR_STATUS[this.code];
  }

  body(): OidfErrorBody {
    return { error: this.code, error_description: this.message };
  }
}
