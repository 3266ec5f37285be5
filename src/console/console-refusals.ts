/**
 * What the console answers before it has routed a request (a malformed address, a request line or
 * headers Node's parser refused): a short page of its own, or the error envelope for a client that
 * asked for JSON, never Fastify's or Node's text with the URL in it.
 */
import type { FastifyError, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import { errorEnvelope } from '../core/errors.ts';
import { clientErrorAnswer } from '../core/http/client-error.ts';

/**
 * The page's own origin only, no inline script or style, no framing, forms post only here: text
 * that reached a page as markup could not run, and the console cannot be clickjacked.
 */
export const CONSOLE_CSP = {
  'default-src': ["'none'"],
  'script-src': ["'self'"],
  'style-src': ["'self'"],
  'img-src': ["'self'"],
  'connect-src': ["'self'"],
  'form-action': ["'self'"],
  'frame-ancestors': ["'none'"],
  'base-uri': ["'none'"],
};

/**
 * What every console answer carries, the earliest refusals included (they are sent before the
 * security plugin runs): the page policy, no framing, no sniffing, no caching.
 */
const REFUSAL_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': Object.entries(CONSOLE_CSP)
    .map(([directive, sources]) => `${directive} ${sources.join(' ')}`)
    .join('; '),
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
  'referrer-policy': 'same-origin',
};

/** The server options that answer refusals before routing (they belong to the Fastify factory, not a plugin). */
export const EARLY_REFUSALS: Pick<FastifyServerOptions, 'frameworkErrors' | 'clientErrorHandler'> = {
  // Errors raised before routing get a short page of our own, never Fastify's or Node's text with the URL in it.
  frameworkErrors: (_error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    void reply.code(400).headers(REFUSAL_HEADERS);
    if (prefersJson(request.headers.accept)) void reply.type('application/json').send(errorEnvelope('BAD_REQUEST', 'The address or the request is malformed.', {}, null));
    else void reply.type('text/html; charset=utf-8').send(plainPage(400));
  },
  // Before any request exists there is no Accept header to read (431: it may be the header that
  // overflowed): a page, with the headers every console page carries.
  clientErrorHandler: clientErrorAnswer((status) => ({ contentType: 'text/html; charset=utf-8', body: plainPage(status), headers: REFUSAL_HEADERS })),
};

/** Whether an Accept header ranks JSON above HTML (a script or a client, not a person's browser). */
function prefersJson(accept: string | undefined): boolean {
  if (!accept) return false;
  const weight = (type: string) =>
    Math.max(
      -1,
      ...accept.split(',').flatMap((part) => {
        const [media, ...parameters] = part.trim().toLowerCase().split(';');
        if (media?.trim() !== type) return [];
        const q = parameters.map((parameter) => /^\s*q=([\d.]+)\s*$/.exec(parameter)?.[1]).find(Boolean);
        return [q === undefined ? 1 : Number(q)];
      }),
    );
  const json = weight('application/json');
  return json > 0 && json >= weight('text/html');
}

/**
 * A page for a request refused before routing: the console's look (its stylesheet, header and problem
 * box) without its script or session, and nothing of the request.
 */
function plainPage(status: 400 | 431): string {
  const what = status === 431 ? "Its headers are too large (often too many or too large cookies: clear this site's cookies)." : 'The address or the request is malformed.';
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">' +
    '<title>Request refused · Ward console</title><link rel="icon" href="/static/favicon.svg" type="image/svg+xml"><link rel="stylesheet" href="/static/console.css"></head>' +
    '<body><header class="top"><a class="brand" href="/dashboard">Ward <span>console</span></a></header>' +
    `<main id="main"><h1>Request refused</h1><div class="problem" role="alert"><p>${what}</p></div><p><a href="/dashboard">Go to the dashboard</a></p></main></body></html>`
  );
}
