import type { FastifyInstance } from 'fastify';
import { html } from '../views/html.ts';
import { sendPage } from '../views/send-page.ts';

// Placeholder until the page is built (issue 13).
export function registerTrustPage(app: FastifyInstance): void {
  app.get('/trust', async (request, reply) => sendPage(request, reply, { page: 'trust', title: 'Trust' }, html`<p>Not built yet.</p>`));
}
