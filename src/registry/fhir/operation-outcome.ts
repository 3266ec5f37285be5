/**
 * Errors of the FHIR directory as `OperationOutcome` resources (FHIR R4 §3.1.0.4): the same decisions
 * as every other registry error (http/error-handler.ts), rendered the FHIR way. The Ward error code
 * stands in `issue.details.coding` (docs/errors.md), its message in `issue.details.text` and
 * `diagnostics`; `issue.code` is FHIR's issue type for it.
 */
import type { FastifyReply } from 'fastify';
import { FHIR_JSON, WARD_CODE_SYSTEMS } from '../../contract/fhir-vocabulary.ts';
import { ERROR_CODES, type ErrorCode } from '../../core/errors.ts';
import type { ErrorRenderer } from '../../core/http/error-renderer.ts';

/** FHIR's issue type (http://hl7.org/fhir/issue-type) for an HTTP status. */
function issueType(code: ErrorCode, status: number): string {
  if (code === 'PHI_DETECTED') return 'security';
  if (code === 'NOT_ACCEPTABLE') return 'not-supported';
  switch (status) {
    case 401:
      return 'login';
    case 403:
      return 'forbidden';
    case 404:
      return 'not-found';
    case 410:
      return 'deleted';
    case 429:
      return 'throttled';
    case 503:
      return 'transient';
  }
  return status >= 500 ? 'exception' : 'invalid';
}

export type OutcomeIssue = { severity: 'error' | 'warning' | 'information'; code: string; message: string; wardCode?: ErrorCode; expression?: string[] };

export function operationOutcome(issues: readonly OutcomeIssue[]) {
  return {
    resourceType: 'OperationOutcome',
    issue: issues.map((issue) => ({
      severity: issue.severity,
      code: issue.code,
      ...(issue.wardCode ? { details: { coding: [{ system: WARD_CODE_SYSTEMS.errorCode, code: issue.wardCode }], text: issue.message } } : {}),
      diagnostics: issue.message,
      ...(issue.expression ? { expression: issue.expression } : {}),
    })),
  };
}

/** Query parameters named by validation errors, as FHIRPath-ish expressions (`Endpoint.status`, or the parameter). */
function expressionsOf(details: Record<string, unknown>): string[] | undefined {
  const errors = details.errors;
  if (!Array.isArray(errors)) return undefined;
  const names = errors.flatMap((error: { pointer?: unknown }) => (typeof error.pointer === 'string' && error.pointer.length > 1 ? [error.pointer.slice(1)] : []));
  return names.length > 0 ? names : undefined;
}

/** The FHIR directory's {@link ErrorRenderer}: an OperationOutcome with the Ward code, at the code's status. */
export const sendOperationOutcome: ErrorRenderer = (reply: FastifyReply, code, message, details) => {
  reply.errorCode = code;
  const text = message ?? ERROR_CODES[code].title;
  const status = ERROR_CODES[code].status;
  const expression = expressionsOf(details);
  return reply
    .code(status)
    .type(`${FHIR_JSON}; charset=utf-8`)
    .send(operationOutcome([{ severity: 'error', code: issueType(code, status), message: text, wardCode: code, ...(expression ? { expression } : {}) }]));
};

/** A refusal of Node's HTTP parser under `/fhir` (core/http/client-error.ts) as an OperationOutcome. */
export const fhirClientErrorSurface = {
  prefix: '/fhir',
  render: (code: 'HEADERS_TOO_LARGE' | 'BAD_REQUEST') => {
    const status = ERROR_CODES[code].status;
    const text = ERROR_CODES[code].title;
    return {
      contentType: `${FHIR_JSON}; charset=utf-8`,
      body: JSON.stringify(operationOutcome([{ severity: 'error', code: issueType(code, status), message: text, wardCode: code }])),
    };
  },
} as const;
