import type { FastifyReply, FastifyRequest } from 'fastify';
import { html, renderDocument, type View } from './html.ts';
import { withLiveSections } from './live-sections.ts';
import { Layout, type PageName } from './layout.ts';

export type PageOptions = { page?: PageName; title: string; status?: number; live?: boolean; liveLabel?: string };

/**
 * Answers with a whole console page: the layout around `content`, the viewer and a fresh CSRF token
 * for the page's forms. Pages are never cached: they show live, per-person state.
 */
export function sendPage(request: FastifyRequest, reply: FastifyReply, options: PageOptions, content: View): FastifyReply {
  const frame = { page: options.page, title: options.title, viewer: request.viewer ?? undefined, csrfToken: reply.generateCsrf(), live: options.live ?? false, ...(options.liveLabel ? { liveLabel: options.liveLabel } : {}) };
  return reply
    .code(options.status ?? 200)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(withLiveSections(() => renderDocument(html`<${Layout} frame=${frame}>${content}<//>` as never)));
}
