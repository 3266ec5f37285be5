import type { FastifyInstance } from 'fastify';
import { html } from '../views/html.ts';
import { sendPage } from '../views/send-page.ts';

// Placeholder until the page is built (issue 13).
export function registerFederationPage(app: FastifyInstance): void {
  app.get('/federation', async (request, reply) => sendPage(request, reply, { page: 'federation', title: 'Federation' }, html`<p>Not built yet.</p>`));
}
