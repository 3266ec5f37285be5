import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { clientErrorAnswer } from '../../core/http/client-error.ts';
import { failure } from './jsonrpc.ts';
import { meshErrorObject } from './mesh-errors.ts';

/**
 * The framework's own failures (a body over 1 MiB, an unknown path…) answered as JSON-RPC envelopes,
 * never as bare HTTP error bodies; the HTTP status still says what happened (413, 404). Shared by
 * agents and the gateway.
 */
export function answerFrameworkErrorsAsJsonRpc(app: FastifyInstance, notFoundMessage: string): void {
  app.setNotFoundHandler((_request, reply) =>
    reply.code(404).type('application/json').send(failure(null, meshErrorObject('METHOD_NOT_FOUND', notFoundMessage))),
  );
  app.setErrorHandler((error: { statusCode?: number; code?: string }, request, reply) => {
    const status = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    if (status === 500) request.log.error({ err: error }, 'request failed');
    const body = status < 500 ? meshErrorObject('INVALID_REQUEST', undefined, { reason: frameworkReason(error.code, status) }) : meshErrorObject('INTERNAL_ERROR');
    return reply.code(status).type('application/json').send(failure(null, body));
  });
}

/** Why the framework refused a request, in words: its own codes (`FST_ERR_…`) are internals and never sent. */
const FRAMEWORK_REASONS: Readonly<Record<string, string>> = {
  FST_ERR_BAD_URL: 'the URL is malformed (a percent-escape is not valid)',
  FST_ERR_CTP_BODY_TOO_LARGE: 'the body is larger than this server accepts',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'the content type is not one this server reads (send application/json)',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'the body is empty',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'the Content-Length does not match the body',
  FST_ERR_CTP_INVALID_JSON_BODY: 'the body is not valid JSON',
  FST_ERR_CTP_BODY_PARSE: 'the body could not be read',
};

export function frameworkReason(code: string | undefined, status: number): string {
  return (code && FRAMEWORK_REASONS[code]) ?? `the request was refused (HTTP ${status} ${STATUS_CODES[status] ?? ''})`.replace(/ \)$/, ')');
}

/**
 * The options that make errors raised before routing JSON-RPC envelopes too: Fastify's
 * `frameworkErrors` (a malformed percent-escape: Fastify's own message would echo the URL) and Node's
 * parser errors (`clientErrorHandler`: 400, or 431 for headers over the limit). Never the refused value.
 */
export const jsonRpcFrameworkErrorOptions = {
  frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply) {
    const reason = frameworkReason(error.code, 400);
    void reply.code(400).type('application/json').send(failure(null, meshErrorObject('INVALID_REQUEST', undefined, { reason })));
  },
  clientErrorHandler: clientErrorAnswer((status) => ({
    contentType: 'application/json',
    body: JSON.stringify(failure(null, meshErrorObject('INVALID_REQUEST', undefined, { reason: status === 431 ? 'headers too large' : 'the HTTP request is malformed' }))),
  })),
};
