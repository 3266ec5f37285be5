import type { FastifyInstance } from 'fastify';
import { html } from '../views/html.ts';
import { sendPage } from '../views/send-page.ts';

// Placeholder until the page is built (issue 13).
export function registerAlertsPage(app: FastifyInstance): void {
  app.get('/alerts', async (request, reply) => sendPage(request, reply, { page: 'alerts', title: 'Alerts' }, html`<p>Not built yet.</p>`));
}
