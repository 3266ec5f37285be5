/**
 * Error codes the registry client makes itself, about an answer it received, which no registry ever
 * sends: so they have no HTTP status and are not in the registry's table (src/core/errors.ts). Stable
 * and never reused, like the registry's; they never collide with its codes. docs/errors.md lists them
 * ("In the registry client"), and test/client/client-errors.test.ts keeps that list and this table in
 * step.
 */
import type { ErrorEnvelope } from '../core/errors.ts';

export const CLIENT_ERROR_CODES = {
  SIGNATURE_INVALID: { retryable: false, title: "The answer does not verify against the registry's published keys." },
} as const satisfies Record<string, { retryable: boolean; title: string }>;

export type ClientErrorCode = keyof typeof CLIENT_ERROR_CODES;

/** The registry's envelope shape, with a client-side code. */
export type ClientErrorEnvelope = { error: Omit<ErrorEnvelope['error'], 'code'> & { code: ClientErrorCode } };

export function clientErrorEnvelope(code: ClientErrorCode, message: string = CLIENT_ERROR_CODES[code].title, details: Record<string, unknown> = {}): ClientErrorEnvelope {
  return { error: { code, message, details, retryable: CLIENT_ERROR_CODES[code].retryable, retry_after_ms: null } };
}
