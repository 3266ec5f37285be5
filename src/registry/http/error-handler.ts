import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { clientErrorAnswer, refusedRequestPath } from '../../core/http/client-error.ts';
import type { ErrorRenderer } from '../../core/http/error-renderer.ts';
import { ERROR_CODES, errorEnvelope, isWardError, type ErrorCode } from '../../core/errors.ts';
import { toValidationIssues } from './validation.ts';

/**
 * Every non-2xx answer goes out in the error envelope (contract §2), the framework's own failures
 * (unknown route, malformed JSON, wrong media type, oversized body) included. 5xx bodies never say
 * what went wrong inside; the log does, under the request id.
 */
export function registerErrorHandling(app: FastifyInstance, send: ErrorRenderer = sendEnvelope, options: { notFound?: boolean } = {}): void {
  if (!app.hasReplyDecorator('errorCode')) app.decorateReply('errorCode', null);
  // A surface without a path prefix of its own (the OIDF endpoints) leaves unknown paths to the registry's handler.
  if (options.notFound !== false) {
    app.setNotFoundHandler((request, reply) => {
      send(reply, 'ROUTE_NOT_FOUND', `No route for ${request.method} on this path.`, {});
    });
  }

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (isWardError(error)) {
      reply.headers(error.headers);
      if (error.retryAfterMs !== null) reply.header('retry-after', String(Math.ceil(error.retryAfterMs / 1000)));
      return send(reply, error.code, error.message, error.details, error.retryAfterMs);
    }
    if (error.validation) {
      const errors = toValidationIssues(error.validation, error.validationContext);
      return send(reply, 'VALIDATION_ERROR', 'The request failed validation.', { errors });
    }
    const framework = frameworkCode(error);
    if (framework) return send(reply, framework, undefined, {});
    request.log.error({ err: error }, 'request failed');
    return send(reply, 'INTERNAL_ERROR', undefined, {});
  });
}

function frameworkCode(error: FastifyError): ErrorCode | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'UNSUPPORTED_MEDIA_TYPE';
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'PAYLOAD_TOO_LARGE';
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return 'MALFORMED_JSON';
  }
  if (error instanceof SyntaxError) return 'MALFORMED_JSON';
  const status = error.statusCode ?? 500;
  if (status === 404) return 'ROUTE_NOT_FOUND';
  if (status >= 400 && status < 500) return 'BAD_REQUEST';
  return undefined;
}

export type { ErrorRenderer };

function sendEnvelope(
  reply: FastifyReply,
  code: ErrorCode,
  message: string | undefined,
  details: Record<string, unknown>,
  retryAfterMs: number | null = null,
): FastifyReply {
  reply.errorCode = code;
  return reply
    .code(ERROR_CODES[code].status)
    .type('application/json; charset=utf-8')
    .send(errorEnvelope(code, message, details, retryAfterMs));
}

/**
 * Fastify's `frameworkErrors`: errors raised before routing (a malformed percent-escape in the URL,
 * a path parameter past its length) without the refused value (Fastify's own message repeats the URL,
 * which may be PHI): in the envelope, or in the format of the surface the path belongs to
 * (`surfaces`: a path prefix and its renderer, e.g. the FHIR directory's OperationOutcome).
 */
export function frameworkErrorsIn(surfaces: Readonly<Record<string, ErrorRenderer>> = {}) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    const surface = Object.keys(surfaces).find((prefix) => request.url === prefix || request.url.startsWith(`${prefix}/`) || request.url.startsWith(`${prefix}?`));
    const send = surface === undefined ? sendEnvelope : (surfaces[surface] as ErrorRenderer);
    void send(reply, 'BAD_REQUEST', error.code === 'FST_ERR_BAD_URL' ? 'The URL is malformed (a percent-escape is not valid).' : undefined, {});
  };
}

/**
 * Fastify's `clientErrorHandler`: what Node's HTTP parser refuses before any request exists gets the
 * envelope as a raw HTTP response (core/http/client-error.ts), then the connection closes.
 */
export const clientErrorInEnvelope = clientErrorAnswer((status) => ({
  contentType: 'application/json; charset=utf-8',
  body: JSON.stringify(errorEnvelope(status === 431 ? 'HEADERS_TOO_LARGE' : 'BAD_REQUEST', undefined, {}, null)),
}));

/** Renders a parser refusal for one surface of the registry (the FHIR directory's OperationOutcome). */
export type ClientErrorSurface = { readonly prefix: string; readonly render: (code: 'HEADERS_TOO_LARGE' | 'BAD_REQUEST') => { contentType: string; body: string } };

/**
 * {@link clientErrorInEnvelope}, except for a request whose path (when the parser still holds its
 * request line) is under a surface's prefix: that surface's format (issue 41, finding 6: a 431 on
 * `/fhir/…` is an OperationOutcome).
 */
export function clientErrorBySurface(surfaces: readonly ClientErrorSurface[]) {
  return clientErrorAnswer((status, error) => {
    const code = status === 431 ? 'HEADERS_TOO_LARGE' : 'BAD_REQUEST';
    const path = refusedRequestPath(error);
    const surface = path === undefined ? undefined : surfaces.find((candidate) => path === candidate.prefix || path.startsWith(`${candidate.prefix}/`) || path.startsWith(`${candidate.prefix}?`));
    if (surface) return surface.render(code);
    return { contentType: 'application/json; charset=utf-8', body: JSON.stringify(errorEnvelope(code, undefined, {}, null)) };
  });
}
