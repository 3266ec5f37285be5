import type { FastifyInstance } from 'fastify';
import { html } from '../views/html.ts';
import { sendPage } from '../views/send-page.ts';

// Placeholder until the page is built (issue 13).
export function registerRoutingPage(app: FastifyInstance): void {
  app.get('/routing', async (request, reply) => sendPage(request, reply, { page: 'routing', title: 'Routing' }, html`<p>Not built yet.</p>`));
}
