import type { FastifyInstance } from 'fastify';
import { html } from '../views/html.ts';
import { sendPage } from '../views/send-page.ts';

// Placeholder until the page is built (issue 13).
export function registerAuditPage(app: FastifyInstance): void {
  app.get('/audit', async (request, reply) => sendPage(request, reply, { page: 'audit', title: 'Audit' }, html`<p>Not built yet.</p>`));
}
