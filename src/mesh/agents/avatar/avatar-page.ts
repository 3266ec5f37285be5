/**
 * `GET /avatar` (docs/avatar.md, "Web page"): the development page and its three static files, served
 * by the agent itself so the page's calls (`/dev/token`, JSON-RPC, `/tts`) are same-origin. No build
 * step, nothing from elsewhere, and a Content-Security-Policy that allows only this origin.
 */
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';

/**
 * Self only; `blob:` for media because the page plays the WAV `/tts` returned from an object URL.
 * No inline script or style, so text that reached the page as markup could not run anyway.
 */
export const AVATAR_PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "media-src 'self' blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const FILES: readonly (readonly [route: string, file: string, type: string])[] = [
  ['/avatar', 'avatar.html', 'text/html; charset=utf-8'],
  ['/avatar/avatar.js', 'avatar.js', 'text/javascript; charset=utf-8'],
  ['/avatar/avatar.css', 'avatar.css', 'text/css; charset=utf-8'],
  ['/avatar/favicon.svg', 'favicon.svg', 'image/svg+xml'],
];

/** Adds the page's routes; the files are read once, when the agent starts. */
export function registerAvatarPage(app: FastifyInstance): void {
  for (const [route, file, type] of FILES) {
    const body = readFileSync(new URL(`./web/${file}`, import.meta.url));
    app.get(route, async (_request, reply) =>
      reply
        .type(type)
        .header('content-security-policy', AVATAR_PAGE_CSP)
        .header('x-content-type-options', 'nosniff')
        .header('referrer-policy', 'no-referrer')
        .header('cache-control', 'no-cache')
        .send(body),
    );
  }
}
